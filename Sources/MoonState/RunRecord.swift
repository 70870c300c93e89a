import Foundation

/// One run of a graph, as `moon history` shows it.
public struct RunRecord: Sendable {
    public var id: Int64 = 0
    /// The graph file's name (the store is per directory).
    public var graph: String
    public var startedAt: Date
    public var durationMilliseconds: Int
    public var ok: Bool
    /// A signal stopped the run (Ctrl-C, SIGTERM, SIGHUP, a closed stdout).
    /// Stored as `ok` = 2 (0 failed, 1 ok), so the table keeps its columns.
    public var interrupted = false
    /// `--force`: nothing was skipped as up to date.
    public var forced: Bool
    public var succeeded = 0
    public var failed = 0
    /// Skipped for another reason than being up to date.
    public var skipped = 0
    public var upToDate = 0
    public var canceled = 0
    public var nodes: [NodeRunRecord] = []
    /// What `moon trace --run N` draws of this run (`run_traces`), as
    /// MoonReport's `TraceRecordText` writes it; nil: none kept.
    public var trace: String?

    /// The largest peak memory of its nodes (0 when none was measured): no
    /// node learns more from this run (`StateStore.recentPeak`).
    public var peak: Int64 { nodes.reduce(0) { max($0, $1.maxRSSBytes ?? 0) } }

    public init(graph: String, startedAt: Date, durationMilliseconds: Int = 0, ok: Bool = false, forced: Bool = false) {
        self.graph = graph
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
        self.ok = ok
        self.forced = forced
    }
}

/// How one node went in one run.
public struct NodeRunRecord: Sendable, Equatable {
    public enum Result: String, Sendable {
        case succeeded, failed, canceled, skipped
        case upToDate = "up-to-date"
    }

    public var node: String
    /// The first attempt's start; nil when the node did not start.
    public var startedAt: Date?
    /// From the first attempt's start to the end, retries included.
    public var durationMilliseconds: Int?
    public var result: Result
    public var attempts: Int
    /// What its processes used (its events' `usage`): CPU time, user and
    /// kernel together, and the peak resident memory; nil when it ran no
    /// process, or in a run recorded before moon measured them.
    public var cpuMilliseconds: Int?
    public var maxRSSBytes: Int64?

    public init(node: String, startedAt: Date? = nil, durationMilliseconds: Int? = nil, result: Result, attempts: Int = 0,
                cpuMilliseconds: Int? = nil, maxRSSBytes: Int64? = nil) {
        self.node = node
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
        self.result = result
        self.attempts = attempts
        self.cpuMilliseconds = cpuMilliseconds
        self.maxRSSBytes = maxRSSBytes
    }
}
