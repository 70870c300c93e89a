import Foundation

extension IncrementalState {
    /// Files a cache restore just wrote (relative to the graph file's
    /// directory) with the hex SHA-256 each was checked against: the stat
    /// cache takes them with their stat now, so a node that reads them
    /// (an archive of restored objects) does not hash them again. `stats`:
    /// those the restore took from the files it wrote, by path (the others
    /// are stat'ed here).
    public func restored(files: [(path: String, hash: String)], stats: [String: FileStat] = [:]) {
        var found: [(ScannedFile, ContentHash)] = []
        found.reserveCapacity(files.count)
        for (path, hex) in files {
            guard let hash = ContentHash(hex: hex) else { continue }
            if let stat = stats[path] {
                found.append((ScannedFile(path: path, stat: stat), hash))
                continue
            }
            guard let stat = FileStat.of(scanner.fullPath(path)), stat.1 == .file else { continue }
            found.append((ScannedFile(path: path, stat: stat.0), hash))
        }
        guard !found.isEmpty else { return }
        lock.withLock { _ in
            let cache = loadedCache()
            for (file, hash) in found { cache.restored(file, hash: hash) }
        }
    }
}
