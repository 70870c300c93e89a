import MoonCommand
import MoonEvents
import MoonGraph

/// How one node runs, as a signal of the reactive core: its command makes
/// one attempt, the core's `timeout` limits each attempt to the node's
/// `timeout:`, and the core's `retry` starts it again after a failure as
/// the node's `retry:` policy says. The runner subscribes to start the node
/// and disposes the subscription to cancel it; the command turns disposal
/// into SIGTERM, grace, SIGKILL of the attempt's process group.
///
/// A timed-out attempt's processes may outlive its subscription by up to
/// the grace period. The next attempt waits for them (`settled`), so a
/// node never has two attempts' processes at once, and the runner holds
/// the node's queue slot until they are gone.
enum NodeSignal {
    /// - Parameters:
    ///   - attempt: one attempt per start.
    ///   - settled: completes once the node's earlier attempts left no process
    ///     (made only for a node that retries: only a retry waits for it).
    ///   - admitted: completes once the runner lets the next attempt start
    ///     (a retry after an OOM kill waits for the whole memory budget).
    ///   - onRetry: the failed attempt's number, the wait before the next, and why it failed.
    static func make(attempt: Signal<NodeOutput>, settled: @autoclosure () -> Signal<Never>,
                     admitted: @autoclosure () -> Signal<Never>, node: RunNode, scheduler: DateScheduler,
                     onRetry: @escaping (_ failedAttempt: Int, _ delay: Duration, _ error: NodeError) -> Void) -> Signal<NodeOutput> {
        var one = attempt
        if let limit = node.timeout {
            one = one.timeoutFromRealStart(after: limit, raising: NodeError(.timeout, "timed out after \(DurationText.format(limit))"),
                                           on: scheduler)
        }
        guard node.retry.times > 0 else { return one }
        return settled().then(admitted()).then(one).retry(node.retry, on: scheduler) { failed, delay, error in
            onRetry(failed, delay, NodeError(error))
        }
    }
}

extension NodeError {
    /// What a node's signal failed with, as a `NodeError`: its own; an
    /// attempt refused because the node's command still runs one (which
    /// `settled` and the runner's states rule out); or (the command was
    /// released) a cancellation.
    init(_ error: Error) {
        switch error {
        case let error as NodeError: self = error
        case CommandError.disabled: self = NodeError(.spawn, "an attempt of the node is still running")
        default: self = NodeError(.canceled, "\(error)")
        }
    }
}
