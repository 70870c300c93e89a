import Foundation

/// The memory a run may use, as the kernel tells it: the default memory
/// budget of a run whose nodes declare memory (`--memory` overrides it).
public enum SystemMemory {
    /// What is available now: `MemAvailable` of /proc/meminfo, or less when
    /// moon's cgroup (v2) or one above it has a `memory.max` with less left
    /// under it (its limit less its `memory.current`). nil when neither can be read.
    public static func available() -> Int64? {
        let meminfo = memAvailable(meminfo: LinuxCalls.readSmallFile("/proc/meminfo"))
        let cgroup = cgroupPath().flatMap { cgroupRoom(path: $0) }
        switch (meminfo, cgroup) {
        case let (m?, c?): return min(m, c)
        case let (m, c): return m ?? c
        }
    }

    /// How many processes the kernel's OOM killer has killed since boot
    /// (`oom_kill` in /proc/vmstat, Linux 4.13 and later), in any cgroup.
    /// Read as each memory-holding node starts and ends: bytes, not Foundation's strings.
    public static func oomKills() -> Int? {
        number(after: "oom_kill", in: LinuxCalls.readSmallFile("/proc/vmstat")).map(Int.init)
    }

    /// `MemAvailable:  123456 kB` in bytes.
    static func memAvailable(meminfo: String) -> Int64? {
        number(after: "MemAvailable:", in: meminfo).map { $0 * 1024 }
    }

    /// The number after `name` and blanks on the line that begins with `name`.
    static func number(after name: String, in text: String) -> Int64? {
        let bytes = Array(text.utf8), key = Array(name.utf8)
        var line = 0
        while line < bytes.count {
            var end = line
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var matches = end - line > key.count
            var k = 0
            while matches, k < key.count {
                matches = bytes[line + k] == key[k]
                k += 1
            }
            if matches {
                var i = line + key.count
                guard bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t") else { line = end + 1; continue }
                while i < end, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t") { i += 1 }
                var value: Int64 = 0
                var digits = 0
                while i < end, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9"), digits < 18 {
                    value = value * 10 + Int64(bytes[i] - UInt8(ascii: "0"))
                    digits += 1
                    i += 1
                }
                return digits > 0 ? value : nil
            }
            line = end + 1
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
