import Glibc
import MoonSystem
import Synchronization

/// A memory cgroup for each child that asks for one (`ProcessSpec.memoryCgroup`),
/// so its peak and an OOM kill are measured for its process tree alone: the
/// cgroup's `memory.max_usage_in_bytes` (no floor of moon's own size, which
/// `ru_maxrss` carries into a spawned child) and its `oom_kill` count (not
/// the whole system's).
///
/// Made under moon's own cgroup of the v1 memory hierarchy, in a directory
/// named after moon's pid and start time (`CgroupFiles.ownerName`), probed
/// at the first child that asks: where moon cannot make one (not root,
/// read-only, no v1 memory controller: cgroup v2 lets a thread enter no
/// cgroup of its own, and glibc's posix_spawn cannot start a child in one),
/// children are measured by `rusage` alone, silently. A cgroup is removed
/// once its child is reaped (or, while something of it lives on, at a later
/// reap and at moon's end); a moon that died without removing its
/// directory leaves it to the next moon that probes.
final class MemoryCgroups: @unchecked Sendable {
    /// One child's cgroup: its directory, and its `tasks` file open for the spawn.
    struct Group {
        let path: String
        let tasks: Int32
    }

    private enum State {
        case unprobed
        case unavailable
        /// moon's own cgroup's `tasks` (open for good) and the directory of its nodes' cgroups.
        case ready(home: Int32, base: String)
    }

    private let lock = Mutex(())
    // Guarded by `lock`.
    private var state = State.unprobed
    private var baseMade = false
    private var next = 0
    /// Directories still busy when their child was reaped.
    private var pending: [String] = []

    /// The `tasks` file the spawning thread returns to (-1 before a probe or where unavailable).
    var home: Int32 {
        lock.withLock { _ in
            if case .ready(let home, _) = state { return home }
            return -1
        }
    }

    /// A new cgroup for one child, probing the first time; nil where none can be made.
    func make() -> Group? {
        lock.withLock { _ in
            if case .unprobed = state { state = Self.probe() }
            guard case .ready(_, let base) = state else { return nil }
            if !baseMade {
                guard Self.makeDirectory(base) else {
                    state = .unavailable
                    return nil
                }
                baseMade = true
            }
            next += 1
            let path = "\(base)/\(next)"
            guard Self.makeDirectory(path) || (errno == ENOENT && Self.makeDirectory(base) && Self.makeDirectory(path)) else { return nil }
            let tasks = open(path + "/tasks", O_WRONLY | O_CLOEXEC)
            guard tasks >= 0 else {
                rmdir(path)
                return nil
            }
            return Group(path: path, tasks: tasks)
        }
    }

    /// After the spawn (`entered`: `moon_spawn_request.cgroup_entered`):
    /// the group the child started in, or nil (the directory is removed).
    /// A thread that could not return to moon's cgroup ends the use of
    /// cgroups for this moon: its next children would start where it sits.
    func spawned(_ group: Group, entered: Int32) -> Group? {
        close(group.tasks)
        if entered == 1 { return group }
        if entered < 0 { lock.withLock { _ in state = .unavailable } }
        rmdir(group.path)
        return nil
    }

    /// The group's peak and OOM kills, read once its child is reaped; then
    /// the group is removed (or kept for a later try while a process of it
    /// lives on). The peak is nil if it could not be read.
    func finish(_ group: Group) -> (peak: Int64?, kills: Int?) {
        let peak = CgroupFiles.number(LinuxCalls.readSmallFile(group.path + "/memory.max_usage_in_bytes"))
        let kills = CgroupFiles.oomKills(LinuxCalls.readSmallFile(group.path + "/memory.oom_control"))
        lock.withLock { _ in
            pending.removeAll { rmdir($0) == 0 || errno != EBUSY }
            if rmdir(group.path) != 0 && errno == EBUSY { pending.append(group.path) }
        }
        return (peak, kills)
    }

    /// A group whose processes were just killed: `removeAll` removes it
    /// once they are gone, whether or not its child is reaped before.
    func removeLater(_ group: Group) {
        lock.withLock { _ in pending.append(group.path) }
    }

    /// At moon's end, once its children were killed: removes the groups
    /// still there (waiting up to `limit` nanoseconds for their last
    /// processes to exit) and moon's directory of them. A later child makes them anew.
    func removeAll(limit: UInt64 = 2_000_000_000) {
        let deadline = LinuxCalls.monotonicNanoseconds() + limit
        lock.withLock { _ in
            guard case .ready(_, let base) = state, baseMade else { return }
            while true {
                pending.removeAll { rmdir($0) == 0 || errno != EBUSY }
                if pending.isEmpty || LinuxCalls.monotonicNanoseconds() >= deadline { break }
                usleep(1000)
            }
            // With a group still busy, the next moon's probe removes it.
            if pending.isEmpty, rmdir(base) == 0 || errno == ENOENT { baseMade = false }
        }
    }

    // MARK: Probing

    /// moon's own memory cgroup, where a directory of its own can be made
    /// (it is made with the first group); stale directories of moons that
    /// are gone are removed first.
    private static func probe() -> State {
        let membership = CgroupFiles.membership(LinuxCalls.readSmallFile("/proc/self/cgroup"))
        guard let path = membership.memory,
              let mount = CgroupFiles.memoryMount(mountinfo: LinuxCalls.readSmallFile("/proc/self/mountinfo")),
              let own = CgroupFiles.directory(of: path, under: mount),
              let start = CgroupFiles.startTime(stat: LinuxCalls.readSmallFile("/proc/self/stat")) else { return .unavailable }
        let home = open(own + "/tasks", O_WRONLY | O_CLOEXEC)
        guard home >= 0 else { return .unavailable }
        removeStale(in: own)
        return .ready(home: home, base: own + "/" + CgroupFiles.ownerName(pid: getpid(), start: start))
    }

    /// Removes the directories (and their groups) of moons that are gone:
    /// no process with that pid and start time. A group that still holds
    /// a process (a node's orphan that outlived its moon) stays, for a later try.
    static func removeStale(in own: String) {
        for name in subdirectories(of: own) {
            guard let owner = CgroupFiles.owner(ofName: name) else { continue }
            let stat = LinuxCalls.readSmallFile("/proc/\(owner.pid)/stat")
            if CgroupFiles.startTime(stat: stat) == owner.start { continue }
            let directory = own + "/" + name
            for group in subdirectories(of: directory) { rmdir(directory + "/" + group) }
            rmdir(directory)
        }
    }

    private static func subdirectories(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR),
                  let name = FileName.withName(of: entry, { name, _ in name }), name != ".", name != ".." else { continue }
            names.append(name)
        }
        return names
    }

    private static func makeDirectory(_ path: String) -> Bool {
        mkdir(path, 0o755) == 0 || errno == EEXIST
    }
}
