import MoonGraph

/// Critical-path weights from history, as ninja uses its log: each node
/// weighs its latest successful duration in milliseconds (at least 1), so the
/// runner starts the longest remaining chain of *time* first, not of nodes.
/// A node's `priority:` ranks above this order (`Plan.schedulingPriority`):
/// with no history every node weighs 1, and a cheap leaf such as a lint
/// would start after every longer chain unless its `priority:` says so.
public enum PriorityWeights {
    /// The weights of `graph`'s nodes from the durations `store` recorded
    /// (`weights(for:durations:)`). A graph of one node has nothing to
    /// order: the store is not read.
    public static func read(for graph: Graph, from store: StateStore?) -> [Int]? {
        guard graph.nodes.count > 1, let store,
              let durations = try? store.lastDurations(graph: StateStore.graphKey(forGraphAt: graph.path)) else { return nil }
        return weights(for: graph, durations: durations)
    }

    /// Weights indexed like `graph.nodes`, for `Plan.make(weights:)`; nil when
    /// no node has a recorded duration (then every node weighs 1). A node
    /// never timed weighs the median of the others.
    public static func weights(for graph: Graph, durations: [String: Int]) -> [Int]? {
        // By index, reading only `name`: a closure over the nodes themselves
        // copied each (large) Node struct, twice per node.
        let recorded = graph.nodes.indices.map { durations[graph.nodes[$0].name].map { max(1, $0) } }
        let known = recorded.compactMap { $0 }.sorted()
        guard !known.isEmpty else { return nil }
        let median = known[known.count / 2]
        return recorded.map { $0 ?? median }
    }
}
