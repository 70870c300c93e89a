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
    private var last: [DirectoryWalk.Path: Stamp] = [:]

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
        for (path, stamp) in now where last[path] != stamp { changes.insert(path) }
        for path in last.keys where now[path] == nil { changes.insert(path) }
        last = now
        return changes.isEmpty ? nil : changes
    }

    private func snapshot() -> [DirectoryWalk.Path: Stamp] {
        var stamps: [DirectoryWalk.Path: Stamp] = [:]
        var seen = Set<DirectoryWalk.Path>()
        for root in roots {
            for directory in DirectoryWalk.directories(under: DirectoryWalk.Path(root.path), recursive: root.recursive)
            where seen.insert(directory).inserted {
                DirectoryWalk.entries(of: directory) { name, bytes, isDirectory in
                    guard !isDirectory else { return }
                    let path = directory.child(bytes, name)
                    var info = stat()
                    guard path.withCString({ stat($0, &info) }) == 0 else { return }
                    stamps[path] = Stamp(mtime: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec,
                                         size: Int(info.st_size), inode: UInt(info.st_ino))
                }
            }
        }
        return stamps
    }
}
