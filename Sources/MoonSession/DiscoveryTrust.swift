import Foundation
import MoonSystem

/// Whether moon may read a file it found by itself rather than one the
/// user named: the graph file found by searching upward, and the includes
/// and dotenv files that graph names. git's `safe.directory` reasoning: a
/// file another user can write (or owns) is that user's code, and TAB or a
/// plain `moon` must not run it as whoever happens to work beneath it. A file
/// named on the command line is read whoever owns it: naming it is the
/// user's decision.
package enum DiscoveryTrust {
    /// Why `path` may not be read as part of a discovered graph, or nil:
    /// it is owned by neither the user running moon nor root, or users
    /// other than its owner can write it or its directory (group or other
    /// write, sticky or not). A file that does not exist is nil here: the
    /// reader says it is missing.
    package static func problem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        // A device is no one's code: `InputFile` refuses it (or reads the terminal on moon's stdin).
        let type = info.st_mode & S_IFMT
        if type == S_IFCHR || type == S_IFBLK { return nil }
        let user = geteuid()
        if info.st_uid != user && info.st_uid != 0 {
            return "\(path) is owned by \(owner(info.st_uid)), not by \(owner(user))"
        }
        if writableByOthers(info) {
            return "\(path) can be written by users other than its owner (mode \(mode(info)))"
        }
        // The directory the path names, and the one the file really is in (through links).
        var directories = [directory(of: path)]
        if let real = realpath(path, nil) {
            directories.append(directory(of: String(cString: real)))
            free(real)
        }
        for directory in directories {
            var dir = stat()
            guard stat(directory, &dir) == 0 else { continue }
            if dir.st_uid != user && dir.st_uid != 0 {
                return "its directory \(directory) is owned by \(owner(dir.st_uid)), not by \(owner(user))"
            }
            if writableByOthers(dir) {
                return "its directory \(directory) can be written by users other than its owner (mode \(mode(dir)))"
            }
        }
        return nil
    }

    /// Other write, or group write by a group other users are in: anyone
    /// but the owner may change it. A user private group (the owner's
    /// primary group, with no other member) is the owner alone, so the
    /// group-writable files a umask of 002 makes stay the owner's.
    package static func writableByOthers(_ info: stat) -> Bool {
        if info.st_mode & S_IWOTH != 0 { return true }
        if info.st_mode & S_IWGRP == 0 { return false }
        return !isPrivateGroup(info.st_gid, of: info.st_uid)
    }

    /// Whether group `gid` is `uid`'s own: its primary group, listing no
    /// other member, and no other user's primary group. Read from the local
    /// files (`UserDatabase`): a user they do not list has no private group here.
    package static func isPrivateGroup(_ gid: gid_t, of uid: uid_t, in users: UserDatabase = .local()) -> Bool {
        guard let user = users.user(uid: uid), user.gid == gid else { return false }
        if let group = users.group(gid: gid), group.members.contains(where: { $0 != user.name }) { return false }
        return !users.users.contains { $0.gid == gid && $0.uid != uid }
    }

    /// `name (uid N)`, or `uid N` for a user the local files do not name.
    package static func owner(_ uid: uid_t) -> String {
        guard let user = UserDatabase.local().user(uid: uid) else { return "uid \(uid)" }
        return "\(user.name) (uid \(uid))"
    }

    private static func mode(_ info: stat) -> String {
        "0" + String(info.st_mode & 0o7777, radix: 8)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
