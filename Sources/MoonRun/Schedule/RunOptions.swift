/// How a run behaves as a whole (the `moon run` options).
public struct RunOptions: Sendable {
    /// Nodes in flight across all queues (`-j`); nil = only the queues limit.
    public var jobs: Int?
    /// `-k`: after a failure, keep running whatever does not depend on it.
    public var keepGoing = false
    /// SIGTERM to SIGKILL (`--grace`).
    public var grace: Duration = .seconds(5)
    /// The whole run's limit (`--timeout`).
    public var timeout: Duration?
    /// `--yes`: every `confirm:` question is answered yes without asking.
    public var assumeYes = false

    public init(jobs: Int? = nil, keepGoing: Bool = false, grace: Duration = .seconds(5), timeout: Duration? = nil) {
        self.jobs = jobs
        self.keepGoing = keepGoing
        self.grace = grace
        self.timeout = timeout
    }
}
