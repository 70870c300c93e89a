import Foundation

extension IncrementalState {
    /// Files a cache restore just wrote (relative to the graph file's
    /// directory) with the hex SHA-256 each was checked against: the stat
    /// cache takes them with their stat now, so a node that reads them
    /// (an archive of restored objects) does not hash them again.
    public func restored(files: [(path: String, hash: String)]) {
        var found: [(ScannedFile, ContentHash)] = []
        found.reserveCapacity(files.count)
        for (path, hex) in files {
            guard let hash = ContentHash(hex: hex), let stat = FileStat.of(scanner.fullPath(path)), stat.1 == .file else { continue }
            found.append((ScannedFile(path: path, stat: stat.0), hash))
        }
        guard !found.isEmpty else { return }
        lock.withLock { _ in
            let cache = loadedCache()
            for (file, hash) in found { cache.restored(file, hash: hash) }
        }
    }
}
