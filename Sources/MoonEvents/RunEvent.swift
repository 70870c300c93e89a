import Foundation

/// One thing that happened during a run. The runner emits these and never
/// prints; reporters (terminal, plain, JSON Lines) only consume them.
/// Per node the order is causal: `start`, `next`…, then `complete` or `error`
/// (with `retry` between attempts); `skip` replaces all of them.
public struct RunEvent: Sendable {
    /// Wall-clock time of the event, for the `ts` field.
    public var time: Date
    public var kind: Kind
    /// On `graph-complete` of a run a signal stopped (Ctrl-C, SIGTERM,
    /// SIGHUP, a closed stdout): the signal's name (`SIGINT`), so that
    /// reporters say "interrupted", not "FAILED".
    public var interrupted: String?
    /// On `graph-complete` of a run its `--timeout` ended: that limit (`4s`),
    /// so that the human summary names it, not only the nodes it canceled.
    public var timedOut: String?
    /// On a `next`: the end of a line still being written (no newline yet:
    /// progress dots, a `\r` progress bar), for the live view. The line
    /// comes again whole as a usual `next`; the event stream and the plain
    /// log leave these out.
    public var partial: Bool
    /// On a `skip` with reason `cache-hit`: what was restored.
    public var restored: CacheRestore?
    /// On the `start`, `retry`, `complete`, `error` and `skip` of a node
    /// that is an instance of a fan-out: its template and item.
    public var instance: RunEvent.Instance?
    /// On the `complete` of a service: moon stopped it because nothing
    /// else was left to run (not a failure).
    public var stopped = false
    /// On the `complete` and `error` of a node that ran processes: what
    /// they used (all its attempts).
    public var usage: NodeUsage?
    /// On a `start` in watch mode: the node was already running, started
    /// by a run before, and this run takes it over (its process goes on).
    public var carried = false
    /// On the `start` of a node's first attempt: how long it waited for a
    /// slot, from when its needs were done (or the run began) to its start,
    /// in milliseconds (`waited_ms`); nil when not known (a carried node).
    public var waitedMilliseconds: Int?
    /// On `graph-complete` in watch mode: nodes still running, handed to
    /// the next run (services, and nodes a change did not affect).
    public var running: [String] = []

    public init(time: Date, kind: Kind, interrupted: String? = nil, partial: Bool = false,
                instance: RunEvent.Instance? = nil, restored: CacheRestore? = nil) {
        self.time = time
        self.kind = kind
        self.interrupted = interrupted
        self.partial = partial
        self.restored = restored
        self.instance = instance
    }

    public enum Kind: Sendable {
        /// The plan: the selected nodes in file order and each queue's width.
        case graphStart(graph: String, nodes: [String], queues: [QueueWidth])
        /// `jobID`: the Slurm job id of a node that runs on a Slurm queue.
        case start(node: String, queue: String, attempt: Int, command: String, jobID: String? = nil)
        case next(node: String, stream: OutputStream, text: String, continued: Bool)
        case retry(node: String, attempt: Int, delayMilliseconds: Int, error: NodeError)
        case complete(node: String, durationMilliseconds: Int, exitCode: Int32?, outputs: [KeyValue])
        case error(node: String, durationMilliseconds: Int, error: NodeError)
        case skip(node: String, reason: SkipReason)
        /// A `for-each` over a need's output has its items: these instances
        /// of `node` join the plan (each ends with complete, error or skip),
        /// and `node` ends once they all have.
        case expand(node: String, instances: [String])
        case graphComplete(ok: Bool, durationMilliseconds: Int, counts: RunCounts, criticalPath: [String])
        /// Watch mode: files changed (relative to the graph's directory), so
        /// these nodes run again; the rerun's `graph-start` follows.
        case watch(changed: [String], nodes: [String])
    }

    /// The name the JSON stream uses for this kind of event.
    public var name: String {
        switch kind {
        case .graphStart: return "graph-start"
        case .start: return "start"
        case .next: return "next"
        case .retry: return "retry"
        case .complete: return "complete"
        case .error: return "error"
        case .skip: return "skip"
        case .expand: return "expand"
        case .graphComplete: return "graph-complete"
        case .watch: return "watch"
        }
    }

    /// The node an event is about, if any.
    public var node: String? {
        switch kind {
        case .start(let n, _, _, _, _), .next(let n, _, _, _), .retry(let n, _, _, _),
             .complete(let n, _, _, _), .error(let n, _, _), .skip(let n, _), .expand(let n, _):
            return n
        case .graphStart, .graphComplete, .watch:
            return nil
        }
    }
}
