import MoonEvents

/// Decides, when a node's needs have ended as its `if` requires and it would
/// start, whether it can be skipped as up to date (its inputs unchanged since
/// its last success), and hears of every success so it can remember it.
/// moon's implementation fingerprints sources through the state store; the
/// runner's tests use a fake. Called on the runner's scheduler.
public protocol UpToDateChecking: AnyObject {
    /// nil: run the node. Otherwise the runner skips it (`skip`, reason
    /// `up-to-date`, or `cache-hit` when restored from the cache), its dependents treat it as succeeded, and these outputs
    /// and values of its last successful run stand in for a new one's.
    func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult?
    /// An attempt of `node` succeeded with these outputs and values.
    func succeeded(node: Int, outputs: [KeyValue], values: [String])
    /// These nodes are about to start their first attempt (their processes
    /// spawn right after this returns): whatever says they are up to date
    /// must be forgotten now, durably, so that a node that does not succeed
    /// (failure, timeout, cancel, Ctrl-C, or moon itself killed) runs again.
    func starting(nodes: [Int])
    /// Whether `node` can be up to date at all (false: `upToDate` would
    /// say nil, and the runner does not gather its inputs to ask).
    func checks(node: Int) -> Bool
    /// A `for-each` over a need's output has its items: the new nodes
    /// `first`, `first + 1`, … are instances of `template`, one per item
    /// (as `NodeLauncher.expand`). True: the checker answers for them, as
    /// for the plan's nodes (and then for every later expansion too);
    /// false: the runner never asks about them.
    func expand(template: Int, items: [String], first: Int) -> Bool
    /// Whether a check may wait on the network (a remote cache): its
    /// threads then wait more than they compute (`Runner.checkWorker`).
    var waitsOnNetwork: Bool { get }
}

extension UpToDateChecking {
    public func checks(node: Int) -> Bool { true }
    public func starting(nodes: [Int]) {}
    public func expand(template: Int, items: [String], first: Int) -> Bool { false }
    public var waitsOnNetwork: Bool { false }
}

/// What an up-to-date node's last successful run left for its dependents.
public struct RestoredResult: Sendable {
    public var outputs: [KeyValue]
    public var values: [String]
    /// Set when the node's files came back from the output cache (it is
    /// skipped with reason `cache-hit`, not `up-to-date`).
    public var cache: CacheRestore?
    /// Set when they come from the run `--resume` continues (reason `resumed`).
    public var resumed: Bool

    public init(outputs: [KeyValue] = [], values: [String] = [], cache: CacheRestore? = nil, resumed: Bool = false) {
        self.outputs = outputs
        self.values = values
        self.cache = cache
        self.resumed = resumed
    }

    /// The reason of the node's `skip` event.
    public var reason: SkipReason { cache != nil ? .cacheHit : resumed ? .resumed : .upToDate }
}
