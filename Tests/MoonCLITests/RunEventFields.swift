import MoonEvents

/// A decoded event's fields by the names the JSON stream gives them, for
/// assertions: nil when the event is of a kind that has no such field. They
/// read the typed `RunEvent` (what `moon replay` decodes), never the JSON.
extension RunEvent {
    /// `next`: the line.
    var text: String? { if case .next(_, _, let text, _) = kind { return text }; return nil }
    var stream: OutputStream? { if case .next(_, let stream, _, _) = kind { return stream }; return nil }
    /// `next`: the line goes on in the next event (it was cut at the size limit).
    var continued: Bool? { if case .next(_, _, _, let continued) = kind { return continued }; return nil }
    /// `skip`: why.
    var reason: SkipReason? { if case .skip(_, let reason) = kind { return reason }; return nil }
    /// `error`: why the node failed.
    var error: NodeError? { if case .error(_, _, let error) = kind { return error }; return nil }
    /// `complete`: the node's outputs (`$MOON_OUTPUT`).
    var outputs: [String: String]? {
        guard case .complete(_, _, _, let outputs) = kind else { return nil }
        return Dictionary(outputs.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }
    /// `complete`: the exit code (a success code other than 0 shows here).
    var exitCode: Int32? { if case .complete(_, _, let code, _) = kind { return code }; return nil }
    /// `start` and `retry`: the attempt's number.
    var attempt: Int? {
        switch kind {
        case .start(_, _, let attempt, _, _), .retry(_, let attempt, _, _): return attempt
        default: return nil
        }
    }
    /// `start`: the command as run (empty for a built-in).
    var command: String? { if case .start(_, _, _, let command, _) = kind { return command }; return nil }
    /// `start`: the Slurm job of a node on a Slurm queue.
    var jobID: String? { if case .start(_, _, _, _, let job) = kind { return job }; return nil }
    /// `retry`: the wait before the next attempt.
    var delayMilliseconds: Int? { if case .retry(_, _, let delay, _) = kind { return delay }; return nil }
    /// `expand`: the instances that join the plan.
    var instances: [String]? { if case .expand(_, let instances) = kind { return instances }; return nil }
    /// `graph-start`: the selected nodes in file order.
    var plan: [String]? { if case .graphStart(_, let nodes, _) = kind { return nodes }; return nil }
    /// `graph-start`: each queue's width, by name.
    var queues: [String: Int]? {
        guard case .graphStart(_, _, let queues) = kind else { return nil }
        return Dictionary(queues.map { ($0.name, $0.concurrency) }, uniquingKeysWith: { $1 })
    }
    /// `graph-complete`: whether the run succeeded.
    var ok: Bool? { if case .graphComplete(let ok, _, _, _) = kind { return ok }; return nil }
    var counts: RunCounts? { if case .graphComplete(_, _, let counts, _) = kind { return counts }; return nil }
    /// `watch`: the files that changed, and the nodes that run again.
    var changed: [String]? { if case .watch(let changed, _) = kind { return changed }; return nil }
    var nodes: [String]? { if case .watch(_, let nodes) = kind { return nodes }; return nil }
}
