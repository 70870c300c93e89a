import MoonCommand
import MoonEvents

/// How the runner reaches a node's command. The real implementation
/// (`CommandLauncher`) runs the node's compiled `NodeCommand`; the runner's
/// tests use a fake on virtual time. The runner composes what it gets here
/// with the core's operators (`NodeSignal`): it subscribes to start, and
/// disposes to cancel.
///
/// Every event must arrive on the runner's scheduler.
public protocol NodeLauncher: AnyObject {
    /// One attempt of `node` (1-based `number`), as a cold signal: each
    /// start runs it anew. It sends the attempt's output, then completes
    /// (its process exited 0, its built-in succeeded) or fails with a
    /// `NodeError`. Disposing the subscription cancels the attempt: its
    /// process group gets SIGTERM, and SIGKILL after the grace period. (The
    /// real launcher's attempts are executions of the node's one command:
    /// a start while another attempt of the node runs fails.)
    func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput>

    /// Completes once no process that an attempt of `node` started is left
    /// (at once when none is): a cancelled or timed-out attempt's processes
    /// outlive its subscription by up to the grace period.
    func settled(node: Int) -> Signal<Never>

    /// The node's part of the run is over: it ended and its processes are
    /// gone, so what ran its attempts (its command) may go.
    func release(node: Int)

    /// Kills at once, without waiting for the grace period, every process
    /// that attempts started and that is still there (a second interrupt).
    func killNow()

    /// Whether the node's `start` event waits for its attempt's first output
    /// (a Slurm node: `NodeOutput.job` names its job once srun has one).
    func announcesStart(node: Int) -> Bool

    /// A `for-each` over a need's output has its items: the new nodes
    /// `first`, `first + 1`, … of the run are instances of the node
    /// `template`, one per item in order. Called before any of them starts.
    func expand(template: Int, items: [String], first: Int)

    /// The node's command as its `start` event shows it (`CommandPreview`),
    /// made when it starts: nil shows the plan's `RunNode.command`.
    func command(node: Int) -> String?

    /// What the processes of `node`'s attempts used, asked once its
    /// processes are gone (nil: it ran none, or the launcher does not measure).
    func usage(node: Int) -> NodeUsage?
}

extension NodeLauncher {
    public func release(node: Int) {}
    public func announcesStart(node: Int) -> Bool { false }
    public func expand(template: Int, items: [String], first: Int) {}
    public func command(node: Int) -> String? { nil }
    public func usage(node: Int) -> NodeUsage? { nil }
}
