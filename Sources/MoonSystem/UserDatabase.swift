import Glibc

/// The local users and groups, read from `/etc/passwd` and `/etc/group`
/// themselves. `getpwuid`, `getgrgid` and `getpwent` go through NSS, which
/// loads shared modules at run time: in moon's static release build that
/// load crashes (docs/decisions.md, "Building"). A user or group known only
/// to another NSS source (LDAP, SSSD) is not found here; callers treat that
/// as the cautious answer.
public struct UserDatabase: Sendable {
    public struct User: Sendable, Equatable {
        public var name: String
        public var uid: uid_t
        public var gid: gid_t

        public init(name: String, uid: uid_t, gid: gid_t) {
            self.name = name
            self.uid = uid
            self.gid = gid
        }
    }

    public struct Group: Sendable, Equatable {
        public var name: String
        public var gid: gid_t
        public var members: [String]

        public init(name: String, gid: gid_t, members: [String]) {
            self.name = name
            self.gid = gid
            self.members = members
        }
    }

    public var users: [User]
    public var groups: [Group]

    public init(users: [User], groups: [Group]) {
        self.users = users
        self.groups = groups
    }

    /// The local files: `/etc/passwd` and `/etc/group` (either missing or
    /// unreadable reads as empty).
    public static func local(passwd: String = "/etc/passwd", group: String = "/etc/group") -> UserDatabase {
        UserDatabase(users: parseUsers(read(passwd)), groups: parseGroups(read(group)))
    }

    public func user(uid: uid_t) -> User? { users.first { $0.uid == uid } }
    public func group(gid: gid_t) -> Group? { groups.first { $0.gid == gid } }

    /// `name:password:uid:gid:gecos:home:shell` lines; others are skipped.
    public static func parseUsers(_ text: String) -> [User] {
        lines(text).compactMap { fields in
            guard fields.count >= 4, !fields[0].isEmpty, let uid = uid_t(fields[2]), let gid = gid_t(fields[3]) else { return nil }
            return User(name: String(fields[0]), uid: uid, gid: gid)
        }
    }

    /// `name:password:gid:member,member` lines; others are skipped.
    public static func parseGroups(_ text: String) -> [Group] {
        lines(text).compactMap { fields in
            guard fields.count >= 4, let gid = gid_t(fields[2]) else { return nil }
            let members = fields[3].split(separator: ",").map(String.init).filter { !$0.isEmpty }
            return Group(name: String(fields[0]), gid: gid, members: members)
        }
    }

    /// Each line's `:`-separated fields, without comments (`#`) or NIS
    /// compat entries (`+`, `-`).
    private static func lines(_ text: String) -> [[Substring]] {
        text.split(separator: "\n").compactMap { line in
            guard let first = line.first, first != "#", first != "+", first != "-" else { return nil }
            return line.split(separator: ":", omittingEmptySubsequences: false)
        }
    }

    /// The file's text, at most 16 MiB of it ("" when it cannot be read or is not a regular file).
    private static func read(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return "" }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 16 << 20 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
