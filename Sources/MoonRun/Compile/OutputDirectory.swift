import Foundation
import MoonProcess

/// Where a run's `$MOON_OUTPUT` files go: `$TMPDIR/moon-XXXXXX`, private to
/// the user (mkdtemp makes it 0700), with an inotify watch (`OutputWatch`);
/// removed when the run ends, or by an `atexit` handler.
///
/// Made and removed off the run's path. A directory costs an inode of the
/// temp directory's filesystem each way (ext4 here: ~0.3 ms to make, in the
/// last millisecond before the first node started; removing it waits for
/// the disk's discard). So `moon run` has it made by a helper thread as
/// soon as it knows it will run a graph (`prepare`), and removes it once
/// the last node has ended, before the run's history is written.
public final class OutputDirectory: @unchecked Sendable {
    /// nil when no directory could be made: nodes then get no `$MOON_OUTPUT`.
    public let path: String?
    let watch: OutputWatch?

    private init() {
        path = Self.make()
        watch = path.flatMap { OutputWatch(directory: $0) }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var prepared: SharedJob<OutputDirectory>?

    /// The directory to make ahead, for the next `take()`: the caller has a
    /// helper thread run it (`runIfFree`); `take()` makes it if none did.
    public static func prepare() -> SharedJob<OutputDirectory> {
        let job = SharedJob { OutputDirectory() }
        lock.withLock { prepared = job }
        return job
    }

    /// The directory `prepare()` set up (made, or being made), else one made now.
    static func take() -> OutputDirectory {
        let job = lock.withLock {
            defer { prepared = nil }
            return prepared
        }
        return job?.value ?? OutputDirectory()
    }

    /// Removes every output directory (only once no node can write there
    /// any more).
    public static func removeAll() {
        TemporaryDirectories.removeAll()
    }

    /// `BASE/moon-XXXXXX` (see `base`), or nil.
    private static func make() -> String? {
        var base = base()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/moon-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let made = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: made)
        }
        if let path { TemporaryDirectories.add(path) }
        return path
    }
}

extension OutputDirectory {
    /// Where the directory goes: `$TMPDIR` when set; else a memory file
    /// system, `$XDG_RUNTIME_DIR` (the user's own) or `/dev/shm`, when it
    /// is a writable tmpfs; else `/tmp`. On a disk (`/tmp` on ext4 here),
    /// making the directory took ~0.3 ms before the first node and removing
    /// it ~0.2 ms after the last (it waits for the journal); on tmpfs both
    /// are a few microseconds. The files are a few lines each.
    static func base() -> String {
        if let tmpdir = getenv("TMPDIR").map({ String(cString: $0) }), !tmpdir.isEmpty { return tmpdir }
        for candidate in [getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }, "/dev/shm"] {
            if let candidate, !candidate.isEmpty, LinuxCalls.isWritableMemoryFileSystem(candidate) { return candidate }
        }
        return "/tmp"
    }
}

/// The output directories still to remove. The launcher removes its own when
/// it is released; moon usually exits before that, so an `atexit` handler
/// removes whatever is left.
enum TemporaryDirectories {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: Set<String> = []
    nonisolated(unsafe) private static var registered = false

    static func add(_ path: String) {
        lock.lock()
        defer { lock.unlock() }
        paths.insert(path)
        if !registered {
            registered = true
            atexit { TemporaryDirectories.removeAll() }
        }
    }

    static func remove(_ path: String) {
        lock.lock()
        let known = paths.remove(path) != nil
        lock.unlock()
        if known { delete(path) }
    }

    static func removeAll() {
        lock.lock()
        let all = paths
        paths = []
        lock.unlock()
        for path in all { delete(path) }
    }

    /// Usually the directory is empty (nodes that write outputs are few, and
    /// their files are consumed): one `rmdir`. FileManager's recursive
    /// removal cost ~0.6 ms, after the last node, at every run's end.
    private static func delete(_ path: String) {
        if rmdir(path) == 0 || errno == ENOENT { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}
