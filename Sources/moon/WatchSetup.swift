import MoonReport
import MoonRun
import MoonState

/// What `moon run --watch` was started with.
struct WatchSetup {
    var graphPath: String
    /// The NODE words, the words after `--` and `--exclude`, as `moon run` selects with them.
    var words: [String]
    var passthrough: [String]
    var selection: SelectionOptions
    var overrides: [String: String]
    var options: RunOptions
    var report: ReportOptions
    var watch: WatchOptions.Values
    var stallAfter: Duration
    var force: Bool
    var diagnosticsColor: Bool
    var store: StateStore?
    /// Where each run's output cache is (`--no-cache`: none).
    var cache: CacheOptions
    /// With `--resume`: the run the first run resumes.
    var resume: ResumeRecord?
}
