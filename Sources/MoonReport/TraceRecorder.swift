import Foundation
import MoonEvents
import MoonGraph

/// Follows a run for its history's trace (`moon trace --run N`): the
/// `TraceBuilder` fed the same events as the reporters. Up-to-date nodes
/// are only counted, so a no-op costs a counter; the needs are looked up
/// at the end, for the nodes that ran.
public final class TraceRecorder: Reporter {
    private var builder = TraceBuilder()
    private var last: Date?

    public init() {}

    public func report(_ event: RunEvent) {
        if case .next = event.kind { return }
        last = event.time
        _ = builder.add(event)
    }

    /// The run's trace, with the needs `graph` gives the nodes that ran.
    public func model(graph: Graph) -> TraceModel? {
        guard var model = builder.finished(at: last) else { return nil }
        model.needs = TraceNeeds.of(graph, for: Set(model.attempts.flatMap { [$0.node, $0.template].compactMap { $0 } }))
        return model
    }
}

/// The needs of a graph's nodes by name, for a trace's arrows.
public enum TraceNeeds {
    /// Of the nodes named in `names` (nil: of all).
    public static func of(_ graph: Graph, for names: Set<String>? = nil) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for node in graph.nodes where !node.needs.isEmpty && names?.contains(node.name) != false {
            out[node.name] = node.needs.map { graph.nodes[$0].name }
        }
        return out
    }
}
