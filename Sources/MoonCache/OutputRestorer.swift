import Foundation
import Glibc
import MoonState

/// Writes a cache entry's outputs back, never half: every root is first
/// built beside its place (`.moon-restore-…` in the same directory, from
/// blobs checked against their hashes and sizes), and only when all are built is
/// each renamed over the old one (a directory replaced whole; the old one
/// removed after). Any failure before the renames leaves the old outputs
/// untouched, and the node runs instead. A root that is one file is built
/// unnamed (`O_TMPFILE`) and linked into place when nothing is there (a
/// fresh checkout): one change of its directory instead of a creation and
/// a rename, each of which holds the directory's lock, for which the
/// restores of a run's outputs, mostly in one directory, wait on each other.
///
/// A restore never writes through a link: each root's parent is reached
/// from the graph file's directory one part at a time, opened without
/// following links (`O_NOFOLLOW`), and everything is written relative to
/// that descriptor. A parent that is a link (say one an earlier restore,
/// of this entry or another, put there) refuses the restore
/// (`CacheError.unsafe`): the node runs instead.
struct OutputRestorer {
    let root: String
    let cache: CacheDirectory
    /// Ends a restore within a block of a blob (`CacheError.stopped`, nothing written).
    var shouldStop: () -> Bool = { false }

    /// What a restore wrote: the files and their bytes, and the stat of each
    /// file built unnamed, taken from its descriptor (a link leaves a file's
    /// size, modification time and inode as they were).
    struct Restored {
        var files: Int
        var bytes: Int64
        var stats: [String: FileStat] = [:]
    }

    /// A root built under a temporary name in its parent (`parent`, open;
    /// shared by the roots of one directory).
    private struct Built {
        let parent: Int32
        let temp: String
        let name: String
        let display: String
        /// What was built is a directory (an old one in its place is moved aside, not replaced by a rename).
        let isDirectory: Bool
        /// The file built unnamed (`O_TMPFILE`), open until it is linked into place; `temp` is then not made yet.
        var unnamed: Int32? = nil
        /// The unnamed file's path (relative to the graph file's directory) and its stat once written.
        var written: (path: String, stat: FileStat)? = nil
    }

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Glibc's module does not carry.
    private static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY
    /// Entries with more roots build them named: each unnamed one holds a descriptor until the end.
    private static let unnamedRootLimit = 16
    /// An unnamed file is linked into place through `/proc/self/fd` (linking
    /// it by its descriptor alone takes a capability a user lacks).
    private static let canLinkUnnamed = access("/proc/self/fd", X_OK) == 0

    func restore(_ entry: CacheEntry) throws -> Restored {
        let top = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else { throw CacheError.io("cannot open \(root)", errno) }
        defer { close(top) }
        // Each root's parent, opened once for the entry's roots in it (most entries write one directory).
        var parents: [Substring: Int32] = [:]
        defer { for fd in parents.values { close(fd) } }
        // (A missing blob fails its copy, before any rename: `missingBlob`.)
        var built: [Built] = []
        do {
            for root in entry.roots {
                let slash = root.utf8.lastIndex(of: UInt8(ascii: "/"))
                let directory = slash.map { root[..<$0] } ?? ""
                let parent: Int32
                if let open = parents[directory] {
                    parent = open
                } else {
                    parent = try openParent(of: root, from: top)
                    parents[directory] = parent
                }
                let name = String(slash.map { root[root.utf8.index(after: $0)...] } ?? Substring(root))
                built.append(try build(root, name: name, in: parent, of: entry, unnamed: entry.roots.count <= Self.unnamedRootLimit))
            }
        } catch {
            for item in built {
                Self.discard(item)
                if let fd = item.unnamed { close(fd) }
            }
            throw error
        }
        // After a failed replacement, what is left of the built roots goes.
        var failure: Error?
        var stats: [String: FileStat] = [:]
        for item in built {
            if failure == nil {
                do {
                    try replace(item)
                    if let written = item.written { stats[written.path] = written.stat }
                } catch {
                    failure = error
                }
            }
            if failure != nil { Self.discard(item) }
            if let fd = item.unnamed { close(fd) }
        }
        if let failure { throw failure }
        let files = entry.files.filter { $0.kind == .file }
        return Restored(files: files.count, bytes: entry.bytes, stats: stats)
    }

    /// Opens the parent of `root` (a validated path of plain parts) from
    /// `top`, making the directories missing, never through a link. The
    /// descriptor is the caller's to close (`top` itself is not).
    private func openParent(of root: String, from top: Int32) throws -> Int32 {
        var parts = root.split(separator: "/").map(String.init)
        parts.removeLast()
        guard !parts.isEmpty else {
            let fd = dup(top)
            guard fd >= 0 else { throw CacheError.io("cannot open \(self.root)", errno) }
            return fd
        }
        var fd = top
        // Closes what the walk opened (never `top`).
        func release(_ fd: Int32) { if fd != top { close(fd) } }
        var walked = ""
        for part in parts {
            walked += (walked.isEmpty ? "" : "/") + part
            let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
            var next = openat(fd, part, flags)
            if next < 0 && errno == ENOENT {
                if mkdirat(fd, part, 0o777) != 0 && errno != EEXIST {
                    let code = errno
                    release(fd)
                    throw CacheError.io("cannot create the directory \(fullPath(walked))", code)
                }
                next = openat(fd, part, flags)
            }
            if next < 0 {
                let code = errno
                var info = stat()
                let isLink = fstatat(fd, part, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
                release(fd)
                if isLink { throw CacheError.unsafe("'\(walked)' is a symbolic link, and a restore never writes through a link") }
                throw CacheError.io("cannot create the directory \(fullPath(root))" + (code == ENOTDIR ? " below \(fullPath(walked))" : ""), code)
            }
            release(fd)
            fd = next
        }
        return fd
    }

    /// Builds `root`'s files under a temporary name beside it, in its open
    /// parent; a root that is one file, unnamed when `unnamed` allows and the file system can.
    private func build(_ root: String, name: String, in parent: Int32, of entry: CacheEntry, unnamed: Bool) throws -> Built {
        let final = fullPath(root)
        let slash = final.utf8.lastIndex(of: UInt8(ascii: "/"))
        let parentPath = slash.map { String(final[..<$0]) }
        // Without the output's name: the temporary name fits wherever the output's does.
        let temp = ".moon-restore-" + TemporaryName.next()
        let tempDisplay = (parentPath.map { $0 + "/" } ?? "") + temp
        if unnamed, Self.canLinkUnnamed, let file = Self.onlyFile(of: root, in: entry) {
            let mode = mode_t(Self.permissions(file.mode, or: 0o644))
            let fd = openat(parent, ".", Self.temporaryFileFlag | O_WRONLY | O_CLOEXEC, mode)
            // A file system without unnamed files (EOPNOTSUPP, EISDIR on old kernels) builds it named.
            if fd >= 0 {
                do {
                    let size = try cache.copyBlob(file.hash!, size: file.size, into: fd, display: final, mode: mode, shouldStop: shouldStop)
                    guard size == file.size else {
                        throw CacheError.invalidEntry("the size of '\(file.path)' is \(file.size ?? -1) by the entry, \(size) by its blob")
                    }
                } catch {
                    close(fd)
                    throw error
                }
                let written = FileStat.of(descriptor: fd).map { (path: file.path, stat: $0.0) }
                return Built(parent: parent, temp: temp, name: name, display: final, isDirectory: false, unnamed: fd, written: written)
            }
        }
        var directories: [(String, UInt32)] = []
        var isDirectory = false
        do {
            // The tree below `temp` is new and this entry's own (a validated
            // entry has no path through one of its links): relative names are safe in it.
            for file in entry.files where CacheEntry.isWithin(file.path, root) {
                let rest = String(decoding: file.path.utf8.dropFirst(root.utf8.count), as: UTF8.self)
                let path = temp + rest
                let display = tempDisplay + rest
                switch file.kind {
                case .directory:
                    if file.path == root { isDirectory = true }
                    guard mkdirat(parent, path, 0o700) == 0 else { throw CacheError.io("cannot create \(display)", errno) }
                    directories.append((path, Self.permissions(file.mode, or: 0o755)))
                case .file:
                    let size = try cache.copyBlob(file.hash!, size: file.size, to: FileLocation(parent, path, display: display),
                                                  mode: mode_t(Self.permissions(file.mode, or: 0o644)), shouldStop: shouldStop)
                    guard size == file.size else {
                        throw CacheError.invalidEntry("the size of '\(file.path)' is \(file.size ?? -1) by the entry, \(size) by its blob")
                    }
                case .symlink:
                    guard leadsInside(file.path, file.target!) else {
                        throw CacheError.unsafe("'\(file.path)' would be a link to '\(file.target!)', which leads outside the graph "
                            + "file's directory through a link there")
                    }
                    guard symlinkat(file.target!, parent, path) == 0 else { throw CacheError.io("cannot create the link \(display)", errno) }
                }
            }
            // Modes last and innermost first: a read-only directory is filled first.
            for (path, mode) in directories.reversed() where fchmodat(parent, path, mode_t(mode), 0) != 0 {
                throw CacheError.io("cannot set the mode of \(tempDisplay)", errno)
            }
        } catch {
            Self.remove(temp, in: parent)
            throw error
        }
        return Built(parent: parent, temp: temp, name: name, display: final, isDirectory: isDirectory)
    }

    /// The entry's one file when `root` is that file alone.
    private static func onlyFile(of root: String, in entry: CacheEntry) -> CacheEntry.File? {
        var only: CacheEntry.File?
        for file in entry.files where CacheEntry.isWithin(file.path, root) {
            guard only == nil, file.path == root, file.kind == .file, file.hash != nil else { return nil }
            only = file
        }
        return only
    }

    /// Removes what was built for `item`, named or not (an unnamed file
    /// goes with its descriptor: closed here once, on a failed build).
    private static func discard(_ item: Built) {
        remove(item.temp, in: item.parent)
    }

    /// Puts the built root in its place: an unnamed file linked where
    /// nothing is, else one rename, after moving an old directory (or
    /// anything a directory replaces) aside.
    private func replace(_ item: Built) throws {
        if let fd = item.unnamed {
            let path = "/proc/self/fd/\(fd)"
            if linkat(AT_FDCWD, path, item.parent, item.name, AT_SYMLINK_FOLLOW) == 0 { return }
            // Something is there (a file, a link, a directory): named beside it, then renamed over it as below.
            guard errno == EEXIST, linkat(AT_FDCWD, path, item.parent, item.temp, AT_SYMLINK_FOLLOW) == 0 else {
                throw CacheError.io("cannot create \(item.display)", errno)
            }
        }
        // A file or link replaces a file or link (or nothing) with the rename alone; a directory in its place fails it (EISDIR).
        if !item.isDirectory, renameat(item.parent, item.temp, item.parent, item.name) == 0 { return }
        var old = stat()
        var new = stat()
        let exists = fstatat(item.parent, item.name, &old, AT_SYMLINK_NOFOLLOW) == 0
        _ = fstatat(item.parent, item.temp, &new, AT_SYMLINK_NOFOLLOW)
        var aside: String?
        if exists && ((old.st_mode & S_IFMT) == S_IFDIR || (new.st_mode & S_IFMT) == S_IFDIR) {
            let name = item.temp + ".old"
            guard renameat(item.parent, item.name, item.parent, name) == 0 else { throw CacheError.io("cannot replace \(item.display)", errno) }
            aside = name
        }
        guard renameat(item.parent, item.temp, item.parent, item.name) == 0 else {
            let code = errno
            if let aside { renameat(item.parent, aside, item.parent, item.name) }
            Self.remove(item.temp, in: item.parent)
            throw CacheError.io("cannot replace \(item.display)", code)
        }
        if let aside {
            Self.keepToolDirectories(from: aside, into: item.name, in: item.parent)
            Self.remove(aside, in: item.parent)
        }
    }

    /// A directory is stored without a tool's `.git`, `.moon`, … (the rule
    /// sources follow), so the ones the old directory held at its top stay
    /// (a `site/.git` worktree for publishing): moved into the restored one.
    private static func keepToolDirectories(from old: String, into new: String, in parent: Int32) {
        let from = openat(parent, old, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard from >= 0 else { return }
        defer { close(from) }
        let names = CacheUsage.names(in: from).filter { Glob.isToolName($0) && !$0.hasPrefix(".moon-") }
        guard !names.isEmpty else { return }
        let to = openat(parent, new, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard to >= 0 else { return }
        defer { close(to) }
        for name in names { _ = renameat(from, name, to, name) }
    }

    /// Whether a link at `link` to `target` leads inside the graph file's
    /// directory as the disk is now: its target read from the link's place,
    /// following the links already there (one committed in the repository,
    /// or restored earlier), so a later write through it (a node's `cp x
    /// out`) stays inside. (`CacheEntry.validate` already refused targets
    /// that are absolute or climb out as written.)
    private func leadsInside(_ link: String, _ target: String) -> Bool {
        guard let base = Self.realPath(root) else { return false }
        let parent = link.split(separator: "/").dropLast().joined(separator: "/")
        let joined = (base == "/" ? "" : base) + (parent.isEmpty ? "" : "/" + parent) + "/" + target
        guard let resolved = Self.resolve(joined) else { return false }
        return resolved == base || resolved.hasPrefix(base == "/" ? "/" : base + "/")
    }

    private static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The absolute `path` with every link in it followed, as far as its
    /// parts exist (the rest read as written); nil for a loop.
    private static func resolve(_ path: String, depth: Int = 0) -> String? {
        guard depth < 40 else { return nil }
        if let real = realPath(path) { return real }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let head = String(path[..<slash])
        let last = String(path[path.index(after: slash)...])
        guard let base = head.isEmpty ? "/" : resolve(head, depth: depth + 1) else { return nil }
        let prefix = base == "/" ? "" : base
        switch last {
        case "", ".": return base
        case "..": return prefix.lastIndex(of: "/").map { String(prefix[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? "/"
        default:
            let full = prefix + "/" + last
            var info = stat()
            guard lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK,
                  let target = try? OutputCollector.target(of: full, full) else { return full }
            return resolve(target.hasPrefix("/") ? target : prefix + "/" + target, depth: depth + 1)
        }
    }

    /// Only the permission bits of an entry's mode: an entry (perhaps from
    /// a server) never makes a setuid, setgid or sticky output.
    private static func permissions(_ mode: UInt32?, or fallback: UInt32) -> UInt32 {
        (mode ?? fallback) & 0o777
    }

    private func fullPath(_ path: String) -> String {
        root == "." ? path : root + "/" + path
    }

    /// Removes a file, link or tree (read-only directories included).
    static func remove(_ path: String) {
        remove(path, in: AT_FDCWD)
    }

    /// Removes `name` in the open directory `parent`: a file, link or tree
    /// (read-only directories included), links removed, never followed.
    static func remove(_ name: String, in parent: Int32) {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            unlinkat(parent, name, 0)
            return
        }
        fchmodat(parent, name, 0o700, 0)
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 {
            for child in CacheUsage.names(in: fd) { remove(child, in: fd) }
            close(fd)
        }
        unlinkat(parent, name, AT_REMOVEDIR)
    }
}
