import MoonSystem
import Synchronization

/// Stats of the files a run's checks will ask about, taken on a second
/// thread while the checks take their own (docs/decisions.md). A no-op's
/// time is mostly its stats, a microsecond each in the kernel, and the
/// paths are known before the first check (the manifests of the nodes'
/// last successes, in the order of the checks): the checks stat from the
/// first path on, this thread from the last one back, and where they meet
/// the thread stops. Neither waits for the other.
///
/// Its stats are as good as the checks' own: each is taken once per run,
/// during the run (`StatMemo`), which decides where one may answer.
final class StatPrefetch: @unchecked Sendable {
    /// At least this many paths for a thread to be worth its start.
    static let minimumPaths = 192

    let paths: [String]
    private let scanner: SourceScanner
    /// One per path, each written by the thread before `done` counts it.
    private let found: UnsafeMutableBufferPointer<(FileStat, FileStat.Kind)?>
    /// How many of the last paths are stat'ed (released after their `found`).
    private let done = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// The thread returned (it took every path, or was stopped).
    private let ended = Atomic<Bool>(false)

    /// Starts stat-ing `paths`, last first, on a new thread on another CPU
    /// than this one; nil when there is none, or no thread can be made.
    /// `start`: what starts the thread (the tests' stand-in for one that cannot).
    init?(paths: [String], scanner: SourceScanner,
          start: (@escaping () -> Void) -> Bool = { BackgroundThread.start(name: "moon.stat", elsewhere: true, $0) }) {
        self.paths = paths
        self.scanner = scanner
        found = .allocate(capacity: max(paths.count, 1))
        found.initialize(repeating: nil)
        // Every property is set: a failed init releases `self`, and `deinit` frees `found`.
        guard start({ [self] in take() }) else { return nil }
    }

    deinit {
        found.deallocate()
    }

    private func take() {
        var index = paths.count
        while index > 0, !stopping.load(ordering: .relaxed) {
            index -= 1
            found[index] = StatMemo.statNow(paths[index], scanner)
            done.store(paths.count - index, ordering: .releasing)
        }
        ended.store(true, ordering: .releasing)
    }

    /// Whether the thread returned, for the tests.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// The first of the paths stat'ed so far: every one from it on is (`stat(at:)`).
    var firstTaken: Int { paths.count - done.load(ordering: .acquiring) }

    /// The stat of path `index`, at or after a `firstTaken` read before.
    func stat(at index: Int) -> (FileStat, FileStat.Kind)? { found[index] }

    /// Stops the thread before its next path: the rest is not wanted.
    func stop() {
        stopping.store(true, ordering: .relaxed)
    }
}
