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

    /// What the cache holds; nothing when it is missing or unsafe (`CacheDirectory.problem` says why).
    public static func measure(_ cache: CacheDirectory) -> CacheUsage {
        var usage = CacheUsage()
        let listing = Listing(cache)
        for entry in listing.entries {
            usage.entries += 1
            usage.bytes += entry.size
            if usage.oldestUse.map({ entry.modified < $0 }) ?? true { usage.oldestUse = entry.modified }
            if usage.newestUse.map({ entry.modified > $0 }) ?? true { usage.newestUse = entry.modified }
        }
        for blob in listing.blobs.values {
            usage.blobs += 1
            usage.bytes += blob.size
        }
        return usage
    }

    /// What `prune` removed.
    public struct Pruned: Sendable {
        public var entries = 0
        public var blobs = 0
        public var bytes: Int64 = 0
    }

    /// After a run added `bytes` to the cache (stored or downloaded):
    /// prunes it to `maxBytes` when it may be past them. The ledger
    /// (`UsageLedger`) says when it cannot be, so a run need not list a
    /// cache of many thousand files to learn that it has room.
    public static func keep(_ cache: CacheDirectory, within maxBytes: Int64, adding bytes: Int64, now: Date = Date()) {
        UsageLedger.add(bytes, to: cache)
        if let estimate = UsageLedger.estimate(cache, now: now), estimate <= maxBytes { return }
        _ = prune(cache, maxBytes: maxBytes, now: now)
    }

    /// Removes least recently used entries, and the blobs only they named,
    /// until the cache holds at most `maxBytes`; the ledger then holds what
    /// is left.
    /// Only the names moon writes are looked at, and every name is
    /// reached and removed from its directory's descriptor (`unlinkat`): a
    /// link planted anywhere in the cache is skipped, never followed.
    public static func prune(_ cache: CacheDirectory, maxBytes: Int64, grace: TimeInterval = 60, now: Date = Date()) -> Pruned {
        var pruned = Pruned()
        let listing = Listing(cache)
        var entries = listing.entries.sorted { $0.modified < $1.modified }
        let blobs = listing.blobs
        let ac = ((try? cache.area(.entries, create: false)) ?? nil) ?? -1
        var total = entries.reduce(Int64(0)) { $0 + $1.size } + blobs.values.reduce(Int64(0)) { $0 + $1.size }
        defer { if ac >= 0 { UsageLedger.reset(cache, total: total, now: now) } }
        guard total > maxBytes else { return pruned }
        // Which blobs each entry names, and how many entries name each blob.
        var named: [String: Set<String>] = [:]
        var references: [String: Int] = [:]
        for entry in entries {
            let data = try? BlobCopy.contents(of: FileLocation(ac, entry.name, display: cache.entries + "/" + entry.name),
                                              maxSize: Int64(CacheEntry.maxSize))
            let hashes = (data ?? nil).flatMap { try? CacheEntry.decode($0, parts: false) }.map { Set($0.files.compactMap(\.hash)) } ?? []
            named[entry.name] = hashes
            for hash in hashes { references[hash, default: 0] += 1 }
        }
        // Blobs no entry names count as freed at once (if old enough).
        for (hash, blob) in blobs where references[hash] == nil && now.timeIntervalSince(blob.modified) >= grace {
            if remove(hash, from: cache) {
                total -= blob.size
                pruned.blobs += 1
                pruned.bytes += blob.size
            }
        }
        while total > maxBytes, !entries.isEmpty {
            let entry = entries.removeFirst()
            guard unlinkat(ac, entry.name, 0) == 0 else { continue }
            total -= entry.size
            pruned.entries += 1
            pruned.bytes += entry.size
            for hash in named[entry.name] ?? [] {
                references[hash, default: 1] -= 1
                guard references[hash] == 0, let blob = blobs[hash], now.timeIntervalSince(blob.modified) >= grace,
                      remove(hash, from: cache) else { continue }
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

    private static func remove(_ hash: String, from cache: CacheDirectory) -> Bool {
        (try? cache.withShard(hash, create: false) { fd in fd.map { unlinkat($0, hash, 0) == 0 } ?? false }) ?? false
    }

    /// The regular files of the cache moon could have written: entries
    /// named as keys, blobs named as hashes in the shard of their first two
    /// digits. Anything else (a link, a stray file) is not counted nor removed.
    struct Listing {
        var entries: [FileInfo] = []
        var blobs: [String: FileInfo] = [:]

        init(_ cache: CacheDirectory) {
            if let ac = (try? cache.area(.entries, create: false)) ?? nil {
                entries = CacheUsage.files(in: ac).filter { CacheKey(hex: $0.name) != nil }
            }
            guard let cas = (try? cache.area(.blobs, create: false)) ?? nil else { return }
            for shard in CacheUsage.names(in: cas) where shard.utf8.count == 2 && BlobName.isValid(shard + String(repeating: "0", count: 62)) {
                guard let fd = try? CacheDirectory.openDirectory(shard, in: cas, display: cache.blobs + "/" + shard, create: false) else {
                    continue
                }
                defer { close(fd) }
                for blob in CacheUsage.files(in: fd) where BlobName.isValid(blob.name) && blob.name.hasPrefix(shard) {
                    blobs[blob.name] = blob
                }
            }
        }
    }

    /// The names in the open directory `fd` (left open). Read through a
    /// descriptor of its own: a `dup` would share the offset, and the
    /// second listing through the kept area descriptors would find nothing.
    static func names(in fd: Int32) -> [String] {
        let copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(validatingCString: $0) }
            }
            if let name, name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// The regular files in the open directory `fd`, looked at without following links.
    static func files(in fd: Int32) -> [FileInfo] {
        names(in: fd).compactMap { name in
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
            return FileInfo(name: name, size: Int64(info.st_blocks) * 512, modified: modified)
        }
    }
}
