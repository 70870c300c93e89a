/// What a node's processes used, on its `complete` and `error` events
/// (`usage`): CPU time in user and kernel mode and the peak resident
/// memory, over all its attempts. Nodes that start no process of their own
/// (a group, a built-in) have none, nor has a Slurm node whose compute node
/// could not run moon's reporter.
public struct NodeUsage: Sendable, Equatable {
    /// How it was measured (the `source` field).
    public enum Source: String, Sendable {
        /// The node's processes ran in a memory cgroup of their own: the
        /// peak is the cgroup's (`memory.max_usage_in_bytes`), the whole
        /// tree at once, page cache and kernel memory it caused included;
        /// CPU is still the reaped processes' sum.
        case cgroup
        /// From the `rusage` of each process of the node's tree that moon
        /// reaped: CPU is their sum, the peak is the largest one process
        /// reached (see docs/usage.md).
        case rusage
        /// From the `rusage` of a Slurm node's task on its compute node,
        /// measured there by moon's reporter (`SlurmTask`): the command and
        /// every process of it that was waited for.
        case slurm
    }

    public var cpuUserMilliseconds: Int
    public var cpuSystemMilliseconds: Int
    public var maxRSSBytes: Int64
    public var source: Source

    public init(cpuUserMilliseconds: Int, cpuSystemMilliseconds: Int, maxRSSBytes: Int64, source: Source = .rusage) {
        self.cpuUserMilliseconds = cpuUserMilliseconds
        self.cpuSystemMilliseconds = cpuSystemMilliseconds
        self.maxRSSBytes = maxRSSBytes
        self.source = source
    }

    /// User and kernel time together: what "CPU" means in the summary and the history.
    public var cpuMilliseconds: Int { cpuUserMilliseconds + cpuSystemMilliseconds }

    /// Another attempt of the node: CPU adds up, the peak is the larger.
    public mutating func add(_ other: NodeUsage) {
        cpuUserMilliseconds += other.cpuUserMilliseconds
        cpuSystemMilliseconds += other.cpuSystemMilliseconds
        maxRSSBytes = max(maxRSSBytes, other.maxRSSBytes)
        // A cgroup's peak only when every attempt had one.
        if other.source != source { source = .rusage }
    }
}
