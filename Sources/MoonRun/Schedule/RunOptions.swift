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
    /// Admission by memory (`--memory`, `resources:`).
    public var resources = ResourceOptions()
    /// `--yes`: every `confirm:` question is answered yes without asking.
    public var assumeYes = false
    /// What Slurm nodes learned, and their tasks' reporter (`CommandLauncher`).
    public var slurm = SlurmRunOptions()

    public init(jobs: Int? = nil, keepGoing: Bool = false, grace: Duration = .seconds(5), timeout: Duration? = nil) {
        self.jobs = jobs
        self.keepGoing = keepGoing
        self.grace = grace
        self.timeout = timeout
    }
}

/// What the runner needs for admission by memory: read only when a node
/// declares (or learned) memory, so a graph without `resources:` costs nothing.
public struct ResourceOptions: Sendable {
    /// `--memory` / `MOON_MEMORY` in bytes; nil: `available()` when the run starts.
    public var memory: Int64?
    /// The memory available now (moon's cgroup limit or MemAvailable; `SystemMemory`).
    public var available: @Sendable () -> Int64? = { nil }
    /// Memory learned from recent runs, by node name (`LearnedResources`),
    /// for nodes that declare none.
    public var learned: [String: Int64] = [:]
    /// Reads `learned` when the run first needs it: before its first node
    /// starts (a no-op never calls it). Called at most once.
    public var learn: @Sendable () -> [String: Int64] = { [:] }
    /// The most any node can have learned (`LearnedResources.bound`), read
    /// before `learn`, which is skipped when that much for each node that
    /// may run at once fits; nil: not known, `learn` decides.
    public var learnedBound: @Sendable () -> Int64? = { nil }
    /// The kernel's count of OOM kills so far (`oom_kill` of /proc/vmstat),
    /// read when a node that needs memory starts and when one is SIGKILLed.
    public var oomKills: @Sendable () -> Int? = { nil }
    /// Where the runner's warnings go (a node larger than the budget).
    public var warn: @Sendable (String) -> Void = { _ in }

    public init(memory: Int64? = nil) {
        self.memory = memory
    }
}
