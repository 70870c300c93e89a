import MoonGraph

/// Memory a node learned from its recent runs, for a node that declares
/// none: the largest peak (`max_rss_bytes`) of its last `runs` successful
/// runs, plus `margin` (20%), so a node that grew a little since still fits.
///
/// Read from the history (`usage` of each run's nodes, docs/usage.md); a
/// run reads it just before its first node starts (`ResourceOptions.learn`),
/// so a no-op reads nothing.
public struct LearnedResources: Sendable {
    /// How many of a node's latest successful runs count.
    public static let runs = 5
    /// What is added to the largest peak.
    public static let margin = 0.2

    /// Learned memory by node name (only nodes that have some).
    public let memory: [String: Int64]
    /// A time limit learned by node name, for a Slurm job (`time(fromDurations:)`).
    public let time: [String: Duration]

    public init(memory: [String: Int64] = [:], time: [String: Duration] = [:]) {
        self.memory = memory
        self.time = time
    }

    /// What the store learned of `graph`'s nodes.
    public init(graph: Graph, store: StateStore?) {
        var memory: [String: Int64] = [:]
        var time: [String: Duration] = [:]
        for (node, runs) in Self.successes(graph: graph, store: store) {
            if let learned = Self.memory(fromPeaks: runs.compactMap(\.peak)) { memory[node] = learned }
            if let limit = Self.time(fromDurations: runs.map(\.milliseconds)) { time[node] = limit }
        }
        self.init(memory: memory, time: time)
    }

    /// The time limit a Slurm job asks for when the node sets none: twice
    /// the longest of its last `runs` successful runs, and at least 5
    /// minutes (Slurm's limits are whole minutes, and its scheduler adds
    /// delays of its own).
    public static func time(fromDurations durations: [Int]) -> Duration? {
        guard let longest = durations.suffix(runs).max() else { return nil }
        // Saturating: the history is read from files a checkout may bring.
        let (twice, overflow) = longest.multipliedReportingOverflow(by: 2)
        return max(.milliseconds(overflow ? Int.max : twice), .seconds(300))
    }

    /// The memory `node` is admitted with when it declares none; nil: nothing learned.
    public func learnedMemory(node: String) -> Int64? { memory[node] }

    /// The rule: the largest of the last `runs` peaks, plus `margin`.
    public static func memory(fromPeaks peaks: [Int64]) -> Int64? {
        guard let largest = peaks.suffix(runs).max(), largest > 0 else { return nil }
        // Saturating, as `time`: a recorded peak is never trusted to be small.
        let extra = (Double(largest) * margin).rounded(.up)
        let (sum, overflow) = largest.addingReportingOverflow(extra < 9.0e18 ? Int64(extra) : Int64.max)
        return overflow ? Int64.max : sum
    }

    /// The most memory any node of `graph` can have learned: the rule
    /// (`memory(fromPeaks:)`) applied to the largest peak of the runs that
    /// `successes` reads, read without their nodes (0 when nothing was
    /// measured); nil when the history cannot say so.
    public static func bound(graph: Graph, store: StateStore?) -> Int64? {
        guard let store else { return 0 }
        guard let peak = store.recentPeak(graph: StateStore.graphKey(forGraphAt: graph.path), limit: searched) else { return nil }
        return memory(fromPeaks: [peak]) ?? 0
    }

    /// How many of the graph's newest runs are searched for a node's successful runs.
    public static let searched = 20

    /// Each node's successful runs among the graph's newest `searched`
    /// runs, oldest first: how long each took and its peak memory (`max_rss_bytes`).
    static func successes(graph: Graph, store: StateStore?) -> [String: [(milliseconds: Int, peak: Int64?)]] {
        guard let store, let runs = try? store.recentSuccesses(graph: StateStore.graphKey(forGraphAt: graph.path), limit: searched) else {
            return [:]
        }
        var successes: [String: [(milliseconds: Int, peak: Int64?)]] = [:]
        for run in runs {
            successes[run.node, default: []].append((run.milliseconds, run.peak))
        }
        return successes
    }
}
