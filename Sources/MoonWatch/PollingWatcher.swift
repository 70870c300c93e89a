import Glibc

/// Watches by looking: every interval it lists the watched trees and
/// compares each file's modification time, size and inode with the last
/// look. The fallback where inotify is unavailable or its limit reached.
final class PollingWatcher: @unchecked Sendable {
    struct Stamp: Equatable {
        var mtime: Int
        var size: Int
        var inode: UInt
    }

    private let roots: [WatchRoot]
    private var last: [String: Stamp] = [:]

    /// Takes the first look, which later looks compare with.
    init(roots: [WatchRoot]) {
        self.roots = roots
        last = snapshot()
    }

    /// How many files the last look found.
    var fileCount: Int { last.count }

    /// What changed since the last look (nil when nothing did).
    func look() -> FileChanges? {
        let now = snapshot()
        var changes = FileChanges()
        for (path, stamp) in now where last[path] != stamp { changes.paths.insert(path) }
        for path in last.keys where now[path] == nil { changes.paths.insert(path) }
        last = now
        return changes.isEmpty ? nil : changes
    }

    private func snapshot() -> [String: Stamp] {
        var stamps: [String: Stamp] = [:]
        var seen = Set<String>()
        for root in roots {
            for directory in DirectoryWalk.directories(under: root.path, recursive: root.recursive)
            where seen.insert(directory).inserted {
                DirectoryWalk.entries(of: directory) { name, isDirectory in
                    guard !isDirectory else { return }
                    let path = DirectoryWalk.join(directory, name)
                    var info = stat()
                    guard stat(path, &info) == 0 else { return }
                    stamps[path] = Stamp(mtime: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec,
                                         size: Int(info.st_size), inode: UInt(info.st_ino))
                }
            }
        }
        return stamps
    }
}
