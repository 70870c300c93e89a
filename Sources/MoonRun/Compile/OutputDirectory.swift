import Foundation
import MoonProcess
import MoonSystem
import Synchronization

/// Where a run's `$MOON_OUTPUT` files go: `$TMPDIR/moon-PID-XXXXXX`, private to
/// the user (mkdtemp makes it 0700). Made when the first node's process is
/// about to start, so a run that starts none (a no-op, built-ins only)
/// makes nothing. Removed when the run ends (once the last node has
/// ended, before the run's history is written), or by an `atexit` handler,
/// or — after a SIGKILL — by the next run (`removeStale`).
public final class OutputDirectory: @unchecked Sendable {
    private let lock = Mutex(())
    // Guarded by `lock`.
    private var made = false
    private var madePath: String?

    init() {}

    /// The directory, made at the first ask; nil when it could not be made:
    /// nodes then get no `$MOON_OUTPUT`.
    public var path: String? {
        lock.withLock { _ in
            if !made {
                made = true
                madePath = Self.make()
            }
            return madePath
        }
    }

    /// Removes this directory, if it was made (its nodes have all ended).
    func remove() {
        let path = lock.withLock { _ in madePath }
        if let path { TemporaryDirectories.remove(path) }
    }

    /// Removes every output directory (only once no node can write there
    /// any more).
    public static func removeAll() {
        TemporaryDirectories.removeAll()
    }

    /// `BASE/moon-PID-XXXXXX` (see `base`), or nil. It stays locked
    /// (`flock`) while it is in use, so that a later moon can tell one that
    /// a moon killed with SIGKILL left behind (`removeStale`).
    private static func make() -> String? {
        var base = base()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/moon-\(getpid())-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let made = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: made)
        }
        if let path {
            let lock = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }
            TemporaryDirectories.add(path, lock: lock)
            removeStale(in: base)
        }
        return path
    }

    /// Removes the output directories in `base` that moons killed with
    /// SIGKILL (or crashed) left: named `moon-PID-XXXXXX` (older moons'
    /// `moon-XXXXXX` are never touched), this user's, their moon gone (no
    /// process PID here) and not locked by a live one (a moon of another
    /// PID namespace sharing the directory still holds its lock). What its
    /// nodes left inside goes too; symbolic links are removed, not followed.
    static func removeStale(in base: String) {
        guard let directory = opendir(base) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            // A name that is not UTF-8 is not `moon-PID-XXXXXX`: not moon's to remove.
            guard let name = FileName.withName(of: entry, { name, _ in name }), let pid = ownerPid(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = base + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid() else { continue }
            let lock = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// The PID in an output directory's name `moon-PID-XXXXXX`, else nil.
    static func ownerPid(_ name: String) -> pid_t? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "moon", parts[2].count == 6, !parts[1].isEmpty,
              parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return pid_t(parts[1])
    }
}

extension OutputDirectory {
    /// Where the directory goes: `$TMPDIR` when set; else a memory file
    /// system, `$XDG_RUNTIME_DIR` (the user's own) or `/dev/shm`, when it
    /// is a writable tmpfs; else `/tmp`. The files are a few lines each, and
    /// on a memory file system making and removing the directory does not
    /// wait for a disk.
    static func base() -> String {
        if let tmpdir = getenv("TMPDIR").map({ String(cString: $0) }), !tmpdir.isEmpty { return tmpdir }
        for candidate in [getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }, "/dev/shm"] {
            if let candidate, !candidate.isEmpty, LinuxCalls.isWritableMemoryFileSystem(candidate) { return candidate }
        }
        return "/tmp"
    }
}
