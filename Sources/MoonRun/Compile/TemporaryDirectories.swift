import Foundation
import MoonCommand
import Synchronization

/// The output directories still to remove. The launcher removes its own when
/// it is released; moon usually exits before that, so an `atexit` handler
/// removes whatever is left.
enum TemporaryDirectories {
    private static let lock = Mutex(())
    /// Each directory with the descriptor that holds its lock (-1: none).
    nonisolated(unsafe) private static var paths: [String: Int32] = [:]
    nonisolated(unsafe) private static var registered = false

    static func add(_ path: String, lock descriptor: Int32 = -1) {
        lock.withLock { _ in
            paths[path] = descriptor
            if !registered {
                registered = true
                atexit { TemporaryDirectories.removeAll() }
            }
        }
    }

    static func remove(_ path: String) {
        let descriptor = lock.withLock { _ in paths.removeValue(forKey: path) }
        if let descriptor { delete(path, descriptor) }
    }

    static func removeAll() {
        let all = lock.withLock { _ in
            let all = paths
            paths = [:]
            return all
        }
        for (path, descriptor) in all { delete(path, descriptor) }
    }

    /// Usually the directory is empty (nodes that write outputs are few, and
    /// their files are consumed): one `rmdir`, and a recursive removal only
    /// when something is left.
    private static func delete(_ path: String, _ descriptor: Int32) {
        defer { if descriptor >= 0 { close(descriptor) } }
        if rmdir(path) == 0 || errno == ENOENT { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}
