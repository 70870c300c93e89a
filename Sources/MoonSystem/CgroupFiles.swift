import Foundation

/// What moon reads of the kernel's cgroup files to give each node a memory
/// cgroup of its own (MoonProcess's `MemoryCgroups`): pure parsing, so it
/// is tested on samples of every form.
public enum CgroupFiles {
    /// Where a process sits: its cgroup v1 memory hierarchy's path
    /// (`4:memory:/a/b`, the controller possibly named with others:
    /// `7:cpu,memory:/x`), and its cgroup v2 path (`0::/a/b`).
    public struct Membership: Equatable, Sendable {
        public var memory: String?
        public var unified: String?

        public init(memory: String? = nil, unified: String? = nil) {
            self.memory = memory
            self.unified = unified
        }
    }

    /// Parses /proc/self/cgroup.
    public static func membership(_ text: String) -> Membership {
        var membership = Membership()
        for line in text.split(separator: "\n") {
            // hierarchy-id:controllers:path; the path may itself hold colons.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                membership.unified = String(fields[2])
            } else if fields[1].split(separator: ",").contains("memory") {
                membership.memory = String(fields[2])
            }
        }
        return membership
    }

    /// A mounted cgroup v1 memory hierarchy: the part of the hierarchy it
    /// shows (`root`, "/" unless a container mounted a subtree) and where.
    public struct Mount: Equatable, Sendable {
        public var root: String
        public var point: String

        public init(root: String, point: String) {
            self.root = root
            self.point = point
        }
    }

    /// The cgroup v1 memory hierarchy's mount in /proc/self/mountinfo
    /// (`36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory`), writable or not.
    public static func memoryMount(mountinfo text: String) -> Mount? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            // The optional fields end at "-": file system type, source, super options.
            guard fields.count >= 10, let dash = fields.firstIndex(of: "-"), dash >= 6, dash + 3 < fields.count,
                  fields[dash + 1] == "cgroup", fields[dash + 3].split(separator: ",").contains("memory") else { continue }
            return Mount(root: unescape(fields[3]), point: unescape(fields[4]))
        }
        return nil
    }

    /// The directory of `path` (a path in the hierarchy, from `membership`)
    /// under `mount`; nil when the mount does not show it.
    public static func directory(of path: String, under mount: Mount) -> String? {
        let root = mount.root == "/" ? "" : mount.root
        guard root.isEmpty || path == root || path.hasPrefix(root + "/") else { return nil }
        let rest = path.dropFirst(root.count)
        let point = mount.point.hasSuffix("/") ? String(mount.point.dropLast()) : mount.point
        return rest == "/" || rest.isEmpty ? point : point + rest
    }

    /// mountinfo writes a space, a tab, a newline and a backslash in a path as `\040`, `\011`, `\012`, `\134`.
    static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4,
               let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How many processes the OOM killer killed in a cgroup: `oom_kill N`
    /// of v1's `memory.oom_control` or v2's `memory.events`; nil when the
    /// kernel writes no such line (before Linux 4.13).
    public static func oomKills(_ text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
            return Int(line.dropFirst("oom_kill ".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// A file holding one number (`memory.max_usage_in_bytes`, `memory.peak`); nil for anything else.
    public static func number(_ text: String) -> Int64? {
        Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// When a process started, in clock ticks after boot: field 22 of
    /// /proc/PID/stat, counted after the command's closing parenthesis
    /// (the command may hold spaces and parentheses).
    public static func startTime(stat text: String) -> UInt64? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state).
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// The name of the directory one moon process makes its nodes'
    /// cgroups in: its pid and start time, so a later moon can tell
    /// whether the maker is gone (a pid alone may have been reused).
    public static func ownerName(pid: Int32, start: UInt64) -> String {
        "moon-\(pid)-\(start)"
    }

    /// The pid and start time an `ownerName` holds; nil for any other name.
    public static func owner(ofName name: String) -> (pid: Int32, start: UInt64)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "moon", let pid = Int32(parts[1]), pid > 0, let start = UInt64(parts[2]) else { return nil }
        return (pid, start)
    }
}
