/// Content hashes of files, keyed by path and trusted while the file's size,
/// mtime (ns) and inode are those it had when it was hashed: an unchanged
/// file is not read again. Asked of the store a path at a time, then, past
/// `lookupLimit` paths, read whole; written back only where it changed.
/// Not thread-safe: its owner (`IncrementalState`) serializes access.
public final class StatCache {
    public struct Entry: Sendable, Equatable {
        public var stat: FileStat
        public var hash: ContentHash
        /// Hashed within a clock tick of its mtime: not to be trusted (see `FileStat.isRacy`).
        public var racy: Bool

        public init(stat: FileStat, hash: ContentHash, racy: Bool) {
            self.stat = stat
            self.hash = hash
            self.racy = racy
        }
    }

    private(set) var entries: [String: Entry]
    /// The store's table, asked only about a file whose stat its manifest
    /// does not have, so a check that manifests answer never reads it.
    public struct Source {
        /// The entry of one path.
        var one: (String) -> Entry?
        /// The whole table.
        var all: () -> [String: Entry]

        public init(one: @escaping (String) -> Entry?, all: @escaping () -> [String: Entry]) {
            self.one = one
            self.all = all
        }
    }
    private var source: Source?
    /// Paths asked of `source` one at a time.
    private var askedOne = Set<String>()
    /// An edit's check asks about the few files that changed, a look-up
    /// each, whatever the table's size; a checkout that touched many reads
    /// the table whole once more than this many were asked.
    static let lookupLimit = 64
    /// Entries added or changed since loading, to be written back.
    public private(set) var changed: [String: Entry] = [:]
    /// Files read and hashed, and files whose hash came from the cache.
    public private(set) var hashed = 0
    public private(set) var reused = 0

    public init(entries: [String: Entry] = [:], source: Source? = nil) {
        self.entries = entries
        self.source = source
    }

    /// Brings `path`'s entry from the store, if it has one and it is not here yet.
    private func lookUp(_ path: String) {
        guard let source, entries[path] == nil else { return }
        if askedOne.count < Self.lookupLimit {
            if askedOne.insert(path).inserted, let entry = source.one(path) { entries[path] = entry }
            return
        }
        for (path, entry) in source.all() where entries[path] == nil { entries[path] = entry }
        self.source = nil
    }

    /// The content hash of `file` (`fullPath` is where to read it), from the
    /// cache when its stat is unchanged; nil when it cannot be read or
    /// `shouldStop` stopped the hash (`ContentHash.ofFile`).
    public func hash(of file: ScannedFile, fullPath: String, shouldStop: () -> Bool = { false }) -> Entry? {
        if let entry = known(file) { return entry }
        let hashedAt = FileStat.nowNanoseconds()
        guard let hash = ContentHash.ofFile(fullPath, shouldStop: shouldStop) else { return nil }
        add(file, hash, racy: file.stat.isRacy(hashedAt: hashedAt))
        return entries[file.path]
    }

    /// The cached entry of `file` when its stat is unchanged (and it was not
    /// racy), or the hash a restore of this run wrote it with (`restored`).
    func known(_ file: ScannedFile) -> Entry? {
        lookUp(file.path)
        guard let entry = entries[file.path], entry.stat == file.stat, !entry.racy else { return restoredEntry(file) }
        reused += 1
        return entry
    }

    /// Files a cache restore of this run wrote, with the hash their blob
    /// was checked against while being written and their stat taken once
    /// in place. A later write changes the stat, and the file is read again.
    private var restoredFiles: [String: (stat: FileStat, hash: ContentHash)] = [:]

    /// A file a restore wrote (`restoredFiles`); its stat taken once it was
    /// written (from its descriptor before it was linked into place, or in place).
    func restored(_ file: ScannedFile, hash: ContentHash) {
        restoredFiles[file.path] = (file.stat, hash)
    }

    /// What a read of `file` would find now, when a restore wrote it and its
    /// stat is unchanged: kept as if read now (racy as a fresh hash would be).
    private func restoredEntry(_ file: ScannedFile) -> Entry? {
        guard let written = restoredFiles[file.path], written.stat == file.stat else { return nil }
        let entry = Entry(stat: file.stat, hash: written.hash, racy: file.stat.isRacy(hashedAt: FileStat.nowNanoseconds()))
        entries[file.path] = entry
        changed[file.path] = entry
        reused += 1
        return entry
    }

    /// A hash the caller read for `file` (its stat taken before the read).
    func add(_ file: ScannedFile, _ hash: ContentHash, racy: Bool) {
        let entry = Entry(stat: file.stat, hash: hash, racy: racy)
        hashed += 1
        entries[file.path] = entry
        changed[file.path] = entry
    }

    /// A hash the caller found elsewhere (a node's manifest) for an unchanged file.
    func countReused() { reused += 1 }

    /// Forgets the changes once they are written.
    public func markSaved() { changed = [:] }
}
