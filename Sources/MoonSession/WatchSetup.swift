import MoonCache
import MoonCommand
import MoonGraph
import MoonReport
import MoonRun
import MoonState

/// What `moon run --watch` was started with.
package struct WatchSetup {
    package var graphPath: String
    /// The NODE words, the words after `--` and `--exclude`, as `moon run` selects with them.
    package var words: [String]
    package var passthrough: [String]
    package var exclude: [String]
    /// moon's subcommands, for the hint of a word that names none of the graph's nodes.
    package var commands: [String]
    package var overrides: [String: String]
    package var options: RunOptions
    package var report: any ReportChoice
    package var watch: WatchTiming
    package var stallAfter: Duration
    package var force: Bool
    package var diagnosticsColor: Bool
    package var store: StateStore?
    /// Each run's output cache (`--no-cache`: none), warnings said.
    package var cache: (Graph) -> OutputCache?
    /// With `--resume`: the run the first run resumes.
    package var resume: ResumeRecord?

    package init(graphPath: String, words: [String], passthrough: [String], exclude: [String], commands: [String],
                 overrides: [String: String], options: RunOptions, report: any ReportChoice, watch: WatchTiming,
                 stallAfter: Duration, force: Bool, diagnosticsColor: Bool, store: StateStore?,
                 cache: @escaping (Graph) -> OutputCache?, resume: ResumeRecord?) {
        self.graphPath = graphPath
        self.words = words
        self.passthrough = passthrough
        self.exclude = exclude
        self.commands = commands
        self.overrides = overrides
        self.options = options
        self.report = report
        self.watch = watch
        self.stallAfter = stallAfter
        self.force = force
        self.diagnosticsColor = diagnosticsColor
        self.store = store
        self.cache = cache
        self.resume = resume
    }
}

/// `--watch-debounce` and `--watch-poll`, checked.
package struct WatchTiming {
    package var debounce: Duration
    package var poll: Duration?

    package init(debounce: Duration, poll: Duration?) {
        self.debounce = debounce
        self.poll = poll
    }
}

/// How the command line asked a run to be shown.
package protocol ReportChoice {
    /// Whether events go out as JSON Lines.
    var isJSON: Bool { get }
    /// Whether the terminal view is shown on `fd` (asked for, or a terminal).
    func showsTerminal(fd: Int32) -> Bool
    /// The reporter writing to `sink`, called on `scheduler` (which also
    /// drives the terminal view's redraws).
    func reporter(sink: OutputSink, scheduler: DateScheduler, stallAfter: Duration) -> Reporter
}
