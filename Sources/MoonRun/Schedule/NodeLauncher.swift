/// How the runner starts one attempt of a node. The real implementation
/// (`CommandLauncher`) runs the node's compiled Command; the runner's tests
/// use a fake on virtual time. Every callback must arrive on the runner's
/// scheduler, and every attempt must end with exactly one `finish`, also when
/// it was cancelled (then with a failure), so that a queue slot is only freed
/// once the node's processes are gone.
public protocol NodeLauncher: AnyObject {
    func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle
    /// Whether the node's `start` event waits for `AttemptEvents.started`
    /// (a Slurm node: its job id is known once srun has it). Default: false.
    func announcesStart(node: Int) -> Bool
}

extension NodeLauncher {
    public func announcesStart(node: Int) -> Bool { false }
}

/// What a node's needs left it, when its attempt starts: the values each
/// sent (in the order of its `needs`), and by need name, the outputs of each
/// that succeeded and how each ended (`needs.NODE.outputs.KEY`, `needs.NODE.result`).
public struct NodeInputs: Sendable {
    public var values: [[String]]
    /// The need names, in the order of `values`.
    public var needs: [String]
    /// need -> its outputs (only needs that succeeded have any).
    public var outputs: [String: [String: String]]
    /// need -> `success`, `failure`, `canceled` or `skipped`.
    public var results: [String: String]

    public init(values: [[String]], needs: [String] = [], outputs: [String: [String: String]] = [:],
                results: [String: String] = [:]) {
        self.values = values
        self.needs = needs
        self.outputs = outputs
        self.results = results
    }
}

/// Where an attempt reports to.
public struct AttemptEvents {
    public let next: (OutputStream, String, Bool) -> Void
    public let finish: (AttemptResult) -> Void
    /// The attempt's Slurm job id, as soon as it is known (see `NodeLauncher.announcesStart`).
    public let started: (String) -> Void
    /// The end of a line still being written (`NodeOutput.partial`).
    public let partial: (OutputStream, String) -> Void
    /// true: the attempt's process waits for descriptors or processes to
    /// become free; false: it has started after such a wait. Its timeout
    /// counts from its real start.
    public let waiting: (Bool) -> Void

    public init(next: @escaping (OutputStream, String, Bool) -> Void, finish: @escaping (AttemptResult) -> Void,
                started: @escaping (String) -> Void = { _ in }, partial: @escaping (OutputStream, String) -> Void = { _, _ in },
                waiting: @escaping (Bool) -> Void = { _ in }) {
        self.next = next
        self.finish = finish
        self.started = started
        self.partial = partial
        self.waiting = waiting
    }
}

public enum AttemptResult: Sendable {
    case success(exitCode: Int32?, outputs: [KeyValue])
    case failure(NodeError)
}

/// A running attempt. `cancel` asks it to stop: SIGTERM to its process group,
/// SIGKILL after the grace period (or at once when `immediately`). The attempt
/// still reports `finish` when it has stopped.
public protocol AttemptHandle: AnyObject {
    func cancel(immediately: Bool)
}
