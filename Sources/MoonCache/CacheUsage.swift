import Foundation
import Glibc

/// How much a cache directory holds, and pruning it to a size, least
/// recently used entries first. An entry's use is its file's modification
/// time (set on every restore). A blob goes when no kept entry names it,
/// unless it is younger than `grace`: another moon may be storing the entry
/// that names it right now.
public struct CacheUsage: Sendable {
    public var entries = 0
    public var blobs = 0
    /// Entries and blobs, as files on disk.
    public var bytes: Int64 = 0
    public var oldestUse: Date?
    public var newestUse: Date?

    /// The default size limit, applied after a run that stored something.
    public static let defaultLimit: Int64 = 5 * 1024 * 1024 * 1024

    public static func measure(_ cache: CacheDirectory) -> CacheUsage {
        var usage = CacheUsage()
        for entry in Self.files(in: cache.entries) {
            usage.entries += 1
            usage.bytes += entry.size
            if usage.oldestUse.map({ entry.modified < $0 }) ?? true { usage.oldestUse = entry.modified }
            if usage.newestUse.map({ entry.modified > $0 }) ?? true { usage.newestUse = entry.modified }
        }
        for shard in Self.names(in: cache.blobs) {
            for blob in Self.files(in: cache.blobs + "/" + shard) {
                usage.blobs += 1
                usage.bytes += blob.size
            }
        }
        return usage
    }

    /// What `prune` removed.
    public struct Pruned: Sendable {
        public var entries = 0
        public var blobs = 0
        public var bytes: Int64 = 0
    }

    /// Removes least recently used entries, and the blobs only they named,
    /// until the cache holds at most `maxBytes`.
    public static func prune(_ cache: CacheDirectory, maxBytes: Int64, grace: TimeInterval = 60, now: Date = Date()) -> Pruned {
        var pruned = Pruned()
        var entries = files(in: cache.entries).sorted { $0.modified < $1.modified }
        var blobs: [String: FileInfo] = [:]
        for shard in names(in: cache.blobs) {
            for blob in files(in: cache.blobs + "/" + shard) { blobs[blob.name] = blob }
        }
        var total = entries.reduce(Int64(0)) { $0 + $1.size } + blobs.values.reduce(Int64(0)) { $0 + $1.size }
        guard total > maxBytes else { return pruned }
        // Which blobs each entry names, and how many entries name each blob.
        var named: [String: Set<String>] = [:]
        var references: [String: Int] = [:]
        for entry in entries {
            let data = try? BlobCopy.contents(of: cache.entries + "/" + entry.name, maxSize: Int64(CacheEntry.maxSize))
            let hashes = (data ?? nil).flatMap { try? CacheEntry.decode($0) }.map { Set($0.files.compactMap(\.hash)) } ?? []
            named[entry.name] = hashes
            for hash in hashes { references[hash, default: 0] += 1 }
        }
        // Blobs no entry names count as freed at once (if old enough).
        for (hash, blob) in blobs where references[hash] == nil && now.timeIntervalSince(blob.modified) >= grace {
            if unlink(cache.blobPath(hash)) == 0 {
                total -= blob.size
                pruned.blobs += 1
                pruned.bytes += blob.size
            }
        }
        while total > maxBytes, !entries.isEmpty {
            let entry = entries.removeFirst()
            guard unlink(cache.entries + "/" + entry.name) == 0 else { continue }
            total -= entry.size
            pruned.entries += 1
            pruned.bytes += entry.size
            for hash in named[entry.name] ?? [] {
                references[hash, default: 1] -= 1
                guard references[hash] == 0, let blob = blobs[hash], now.timeIntervalSince(blob.modified) >= grace,
                      unlink(cache.blobPath(hash)) == 0 else { continue }
                total -= blob.size
                pruned.blobs += 1
                pruned.bytes += blob.size
            }
        }
        return pruned
    }

    struct FileInfo {
        var name: String
        var size: Int64
        var modified: Date
    }

    static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    static func files(in directory: String) -> [FileInfo] {
        names(in: directory).compactMap { name in
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
            return FileInfo(name: name, size: Int64(info.st_blocks) * 512, modified: modified)
        }
    }
}
