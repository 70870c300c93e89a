import Glibc
import MoonSystem

/// Why inotify cannot watch: moon then polls instead.
public enum WatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// inotify itself is missing or refused (`inotify_init1` failed).
    case unavailable(String)
    /// The per-user limit of watches (`fs.inotify.max_user_watches`) or
    /// instances was reached.
    case limitReached(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): return "inotify is unavailable (\(reason))"
        case .limitReached(let reason): return "the inotify limit was reached (\(reason))"
        }
    }
}

/// Watches directory trees with inotify: one watch per directory, placed
/// on directories created later too, so a file that starts to match a
/// glob in a new directory is seen. Used on one thread (moon's event loop,
/// which polls `fd`).
final class InotifyWatcher: @unchecked Sendable {
    let fd: Int32
    private let roots: [WatchRoot]
    /// Per watch descriptor: its directory and whether its tree is watched.
    private var directories: [Int32: (path: DirectoryWalk.Path, recursive: Bool)] = [:]
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// What a directory's watch reports: writes (each and the last), new,
    /// removed and renamed entries (an editor's save by rename is a
    /// `IN_MOVED_TO`), and the directory's own removal.
    private static let mask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE_SELF) | UInt32(IN_ONLYDIR)

    /// Places the watches; throws when inotify is unavailable or its limit
    /// is reached.
    init(roots: [WatchRoot]) throws(WatchError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            if code == EMFILE { throw .limitReached("max_user_instances: \(reason)") }
            throw .unavailable(reason)
        }
        self.fd = fd
        self.roots = roots
        do {
            for root in roots { _ = try addTree(DirectoryWalk.Path(root.path), recursive: root.recursive) }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// How many directories are watched.
    var watchCount: Int { directories.count }

    func close() {
        Glibc.close(fd)
    }

    /// Watches `path` and, when `recursive`, every directory below it;
    /// returns the directories now watched.
    @discardableResult
    private func addTree(_ path: DirectoryWalk.Path, recursive: Bool) throws(WatchError) -> [DirectoryWalk.Path] {
        let found = DirectoryWalk.directories(under: path, recursive: recursive)
        for directory in found {
            let wd = directory.withCString { inotify_add_watch(fd, $0, Self.mask) }
            if wd >= 0 {
                directories[wd] = (directory, recursive)
                continue
            }
            let code = errno
            // The limit: moon must say so and poll, never watch part of the tree.
            if code == ENOSPC { throw .limitReached("max_user_watches: \(String(cString: strerror(code)))") }
            // Gone meanwhile, or not readable: nothing there to watch.
        }
        return found
    }

    /// Reads every pending event; returns what changed (nil when nothing
    /// did). Throws when a new directory cannot be watched for the limit.
    func readChanges() throws(WatchError) -> FileChanges? {
        var changes = FileChanges()
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = Array(buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 })
                offset += 16 + length
                try handle(wd: wd, mask: mask, nameBytes: nameBytes, into: &changes)
            }
        }
        return changes.isEmpty ? nil : changes
    }

    private func handle(wd: Int32, mask: UInt32, nameBytes: [UInt8], into changes: inout FileChanges) throws(WatchError) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: watch every directory again (new ones
            // included) and let the caller look at everything.
            for root in roots { _ = try addTree(DirectoryWalk.Path(root.path), recursive: root.recursive) }
            changes.overflowed = true
            return
        }
        guard let (directory, recursive) = directories[wd] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            directories[wd] = nil
            return
        }
        let name = FileName.decode(nameBytes)
        let path = nameBytes.withUnsafeBufferPointer { directory.child($0, name) }
        if nameBytes.isEmpty { changes.insert(directory) } else { changes.insert(path) }
        let isDirectory = mask & UInt32(IN_ISDIR) != 0
        if !nameBytes.isEmpty, isDirectory, recursive, mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0,
           !WatchRoot.skippedNames.contains(name ?? "") {
            // Files may have appeared before the watch did: they count as changed.
            for added in try addTree(path, recursive: true) {
                DirectoryWalk.entries(of: added) { entry, bytes, isDirectory in
                    if !isDirectory { changes.insert(added.child(bytes, entry)) }
                }
            }
        }
    }
}

extension FileChanges {
    /// A change at `path`; one whose path is not UTF-8 cannot be named,
    /// so it counts as a change to anything (as lost events do).
    mutating func insert(_ path: DirectoryWalk.Path) {
        if let text = path.text { paths.insert(text) } else { overflowed = true }
    }
}
