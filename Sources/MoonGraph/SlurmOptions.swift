/// Resources for a Slurm job step. Set on a Slurm queue and overridden per node;
/// every field is optional so a node's options can be layered over its queue's.
public struct SlurmOptions: Sendable, Hashable {
    public var partition: String?
    public var cpusPerTask: Int?
    /// Memory as Slurm writes it: `4G`, `512M`, `1000`.
    public var mem: String?
    /// Time limit as Slurm writes it: `30`, `1:00:00`, `2-00:00:00`.
    public var time: String?
    public var account: String?
    /// Extra arguments passed to `srun` unchanged.
    public var args: [String]

    public init(partition: String? = nil, cpusPerTask: Int? = nil, mem: String? = nil,
                time: String? = nil, account: String? = nil, args: [String] = []) {
        self.partition = partition
        self.cpusPerTask = cpusPerTask
        self.mem = mem
        self.time = time
        self.account = account
        self.args = args
    }

    public var isEmpty: Bool { self == SlurmOptions() }

    /// These options with every field that `overrides` sets replacing ours;
    /// `args` are appended (queue arguments first, then the node's).
    public func overridden(by overrides: SlurmOptions) -> SlurmOptions {
        SlurmOptions(
            partition: overrides.partition ?? partition,
            cpusPerTask: overrides.cpusPerTask ?? cpusPerTask,
            mem: overrides.mem ?? mem,
            time: overrides.time ?? time,
            account: overrides.account ?? account,
            args: args + overrides.args)
    }

    /// `partition=debug cpus-per-task=4 mem=4G`, in the file's key names, for listings.
    public var summary: String {
        var parts: [String] = []
        if let partition { parts.append("partition=\(partition)") }
        if let cpusPerTask { parts.append("cpus-per-task=\(cpusPerTask)") }
        if let mem { parts.append("mem=\(mem)") }
        if let time { parts.append("time=\(time)") }
        if let account { parts.append("account=\(account)") }
        if !args.isEmpty { parts.append("args=\(args.joined(separator: " "))") }
        return parts.joined(separator: " ")
    }
}
