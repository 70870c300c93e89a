/// Resources for a Slurm job step. Set on a Slurm queue and overridden per node;
/// every field is optional so a node's options can be layered over its queue's.
public struct SlurmOptions: Sendable, Hashable, Codable {
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

    /// These options, with `mem` and `cpus-per-task` taken from a node's
    /// `resources:` where they set none (memory in whole MiB, rounded up).
    public func requesting(_ resources: ResourceSpec) -> SlurmOptions {
        var options = self
        if options.mem == nil, let bytes = resources.memory {
            options.mem = String((bytes + (1 << 20) - 1) >> 20) + "M"
        }
        if options.cpusPerTask == nil, let cpus = resources.cpus { options.cpusPerTask = cpus }
        return options
    }

    /// These options, with `time` set from a node's `timeout:` (and a
    /// minute more) when they have none (see `Graph.slurmOptions(for:)`).
    public func limited(by timeout: Duration?) -> SlurmOptions {
        withTime(timeout.map { $0 + .seconds(60) })
    }

    /// These options with `time` set to `limit` when they have none.
    public func withTime(_ limit: Duration?) -> SlurmOptions {
        guard time == nil, let limit else { return self }
        var options = self
        options.time = Self.time(limit)
        return options
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

    // MARK: - Slurm's forms of memory and time

    /// Slurm memory: digits with an optional K, M, G or T unit.
    static func isValidMemory(_ text: String) -> Bool {
        var digits = Substring(text)
        if let last = digits.last, "KMGTkmgt".contains(last) { digits = digits.dropLast() }
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A duration as a Slurm time limit, rounded up to whole seconds
    /// (`D-HH:MM:SS`, or `HH:MM:SS` under a day). A bare number in `time:`
    /// stays Slurm's: minutes.
    static func time(_ duration: Duration) -> String {
        let (whole, atto) = duration.components
        let total = max(1, whole + (atto > 0 ? 1 : 0))
        let days = total / 86_400, hours = (total % 86_400) / 3600, minutes = (total % 3600) / 60, seconds = total % 60
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let clock = "\(two(hours)):\(two(minutes)):\(two(seconds))"
        return days > 0 ? "\(days)-\(clock)" : clock
    }

    /// Slurm time: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`, or `UNLIMITED`/`INFINITE`.
    static func isValidTime(_ text: String) -> Bool {
        if text == "UNLIMITED" || text == "INFINITE" || text == "infinite" || text == "unlimited" { return true }
        func numbers(_ s: Substring) -> Int? {
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
            return parts.count
        }
        let dash = text.split(separator: "-", omittingEmptySubsequences: false)
        switch dash.count {
        case 1: return numbers(dash[0]).map { (1...3).contains($0) } ?? false
        case 2:
            guard numbers(dash[0]) == 1 else { return false }
            return numbers(dash[1]).map { (1...3).contains($0) } ?? false
        default: return false
        }
    }
}
