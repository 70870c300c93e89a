import MoonGraph

/// Memory a node learned from its recent runs, for a node that declares
/// none: the largest peak (`max_rss_bytes`) of its last `runs` successful
/// runs, plus `margin` (20%), so a node that grew a little since still fits.
///
/// The seam for the per-node usage history: `peaks` is where the recorded
/// peaks come in. Until the history records them it reads none, so no node
/// has a learned value and a run costs nothing more.
public struct LearnedResources: Sendable {
    /// How many of a node's latest successful runs count.
    public static let runs = 5
    /// What is added to the largest peak.
    public static let margin = 0.2

    /// Learned memory by node name (only nodes that have some).
    public let memory: [String: Int64]

    public init(memory: [String: Int64] = [:]) {
        self.memory = memory
    }

    /// What the store learned of `graph`'s nodes.
    public init(graph: Graph, store: StateStore?) {
        var memory: [String: Int64] = [:]
        for (node, peaks) in Self.peaks(graph: graph, store: store) {
            if let learned = Self.memory(fromPeaks: peaks) { memory[node] = learned }
        }
        self.init(memory: memory)
    }

    /// The memory `node` is admitted with when it declares none; nil: nothing learned.
    public func learnedMemory(node: String) -> Int64? { memory[node] }

    /// The rule: the largest of the last `runs` peaks, plus `margin`.
    public static func memory(fromPeaks peaks: [Int64]) -> Int64? {
        guard let largest = peaks.suffix(runs).max(), largest > 0 else { return nil }
        return largest + Int64((Double(largest) * margin).rounded(.up))
    }

    /// The peak memory of each node's successful runs, oldest first. The
    /// usage history is not recorded yet: none.
    static func peaks(graph: Graph, store: StateStore?) -> [String: [Int64]] {
        [:]
    }
}
