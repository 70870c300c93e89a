import MoonCommand

/// The `defaults:` section: values every node gets unless it sets its own.
/// Already applied to `Graph.nodes`; kept for listings and tools.
public struct NodeDefaults: Sendable, Hashable, Codable {
    /// Index into `Graph.queues` (0, `default`, unless set).
    public var queue: Int = 0
    public var timeout: Duration?
    public var retry: RetryPolicy = .none
    public var shell: Shell = .sh
    public var dir: String?
    public var continueOnError: Bool = false
    public var condition: RunCondition = .success
    /// `success-codes:`: the exit codes that count as success.
    public var successCodes = Node.defaultSuccessCodes
    /// `resources:`; each node's own keys override these one by one.
    public var resources = ResourceSpec()

    public init() {}
}
