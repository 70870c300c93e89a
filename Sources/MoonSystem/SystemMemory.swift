import Foundation

/// The memory a run may use, as the kernel tells it: the default memory
/// budget of a run whose nodes declare memory (`--memory` overrides it).
public enum SystemMemory {
    /// What is available now: `MemAvailable` of /proc/meminfo, or less when
    /// moon's cgroup (v2) or one above it has a `memory.max` with less left
    /// under it (its limit less its `memory.current`). nil when neither can be read.
    public static func available() -> Int64? {
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)).flatMap(memAvailable(meminfo:))
        let cgroup = cgroupPath().flatMap { cgroupRoom(path: $0) }
        switch (meminfo, cgroup) {
        case let (m?, c?): return min(m, c)
        case let (m, c): return m ?? c
        }
    }

    /// How many processes the kernel's OOM killer has killed since boot
    /// (`oom_kill` in /proc/vmstat, Linux 4.13 and later), in any cgroup.
    public static func oomKills() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/vmstat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
            return Int(line.dropFirst("oom_kill ".count))
        }
        return nil
    }

    /// `MemAvailable:  123456 kB` in bytes.
    static func memAvailable(meminfo: String) -> Int64? {
        for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let kib = Int64(fields[1]) else { return nil }
            return kib * 1024
        }
        return nil
    }

    /// The cgroup v2 path of this process (`0::/user.slice/…` in /proc/self/cgroup).
    static func cgroupPath() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            return String(line.dropFirst(3))
        }
        return nil
    }

    /// The least room left under a `memory.max` from `path` up to the root.
    static func cgroupRoom(path: String, root: String = "/sys/fs/cgroup") -> Int64? {
        var room: Int64?
        var components = path.split(separator: "/").map(String.init)
        while true {
            let dir = root + (components.isEmpty ? "" : "/" + components.joined(separator: "/"))
            if let limit = number(dir + "/memory.max") {
                let used = number(dir + "/memory.current") ?? 0
                room = min(room ?? .max, max(0, limit - used))
            }
            guard !components.isEmpty else { break }
            components.removeLast()
        }
        return room
    }

    /// A file holding one number (`max` and anything else: nil).
    private static func number(_ path: String) -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
