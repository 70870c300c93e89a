import Glibc

/// What a child's process tree used, from the `rusage` of each of its
/// processes that moon reaped (`wait4`): the group's leader, whose figures
/// already include the descendants it waited for, and the members that were
/// re-parented to moon (moon is their subreaper) and reaped by it. CPU time
/// adds up; the peak resident set is the largest of any one process's, since
/// the kernel keeps no peak of a set of processes (a sum would count
/// processes that ran one after another as if they ran at once).
public struct ProcessUsage: Sendable, Equatable {
    public var userMicroseconds: Int64 = 0
    public var systemMicroseconds: Int64 = 0
    /// The largest `ru_maxrss` (KiB on Linux) of a reaped process, in
    /// bytes; the cgroup's peak instead when the tree ran in one (`cgroupPeakBytes`).
    public var maxResidentBytes: Int64 = 0
    /// When the tree ran in a memory cgroup of its own (`MemoryCgroups`):
    /// the cgroup's peak (`memory.max_usage_in_bytes`, which counts the
    /// page cache and kernel memory the tree caused, as the kernel's
    /// memory limits do), and how many of its processes the kernel's OOM
    /// killer killed. nil without one.
    public var cgroupPeakBytes: Int64?
    public var memoryKills: Int?

    public init(userMicroseconds: Int64 = 0, systemMicroseconds: Int64 = 0, maxResidentBytes: Int64 = 0) {
        self.userMicroseconds = userMicroseconds
        self.systemMicroseconds = systemMicroseconds
        self.maxResidentBytes = maxResidentBytes
    }

    /// One more reaped process of the tree.
    public mutating func add(_ usage: rusage) {
        userMicroseconds += Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec)
        systemMicroseconds += Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec)
        maxResidentBytes = max(maxResidentBytes, Int64(usage.ru_maxrss) * 1024)
    }

    /// Another process tree (another attempt of the same node): CPU adds, the peak is the larger.
    public mutating func add(_ other: ProcessUsage) {
        userMicroseconds += other.userMicroseconds
        systemMicroseconds += other.systemMicroseconds
        maxResidentBytes = max(maxResidentBytes, other.maxResidentBytes)
        // A peak of the cgroup only when both trees ran in one.
        cgroupPeakBytes = cgroupPeakBytes.flatMap { mine in other.cgroupPeakBytes.map { max(mine, $0) } }
        memoryKills = memoryKills.flatMap { mine in other.memoryKills.map { mine + $0 } }
    }
}
