import Foundation
import Glibc
import Synchronization

/// The local cache on disk: entries under `ac/<key>` (JSON, `CacheEntry`)
/// and content-addressed blobs under `cas/<2 hex>/<hash>`, as a Bazel HTTP
/// cache names them. Every write goes to a temporary file in `tmp/` and is
/// renamed into place, so two moon processes can write the same entry or
/// blob at once (the last rename wins, with the same bytes) and a reader
/// never sees half a file. An entry's modification time is its last use
/// (`prune` removes the least recently used first).
///
/// Everything below the directory as given is reached from descriptors of
/// its own directories, each opened without following a link (`openat`
/// with `O_NOFOLLOW`, `unlinkat`, `renameat`): a link planted in a shared
/// cache or committed in a repository (`v1`, `ac`, `cas`, a shard, `tmp`,
/// an entry, a blob) is never followed, and a directory of the cache that
/// is a link or belongs to another user (root excepted) makes the cache
/// unusable (`CacheError.unsafe`), not a door to that user's files.
public struct CacheDirectory: Sendable {
    /// The directory as given (`--cache-dir`, …).
    public let path: String
    let root: String
    private let handles: Handles

    public init(path: String) {
        self.path = path
        root = path.hasSuffix("/") ? path + "v1" : path + "/v1"
        handles = Handles(path: path, root: root)
    }

    var entries: String { root + "/ac" }
    var blobs: String { root + "/cas" }
    var temporary: String { root + "/tmp" }

    func entryPath(_ key: CacheKey) -> String { entries + "/" + key.hex }
    func blobPath(_ hash: String) -> String { blobs + "/" + hash.prefix(2) + "/" + hash }

    /// The directories of the cache below `v1`, and `v1` itself (`top`, where its usage ledger is).
    enum Area: String {
        case entries = "ac", blobs = "cas", temporary = "tmp", top = "."
    }

    /// The open directory `v1/<area>` (kept open for the process; never
    /// close it); nil when it does not exist and `create` is false.
    func area(_ area: Area, create: Bool) throws -> Int32? {
        try handles.area(area.rawValue, create: create)
    }

    /// Runs `body` with blob `hash`'s shard directory open (nil: there is
    /// none yet). The shard is opened once and kept, as the areas are: a
    /// restore reads blobs from a few hundred shards.
    func withShard<T>(_ hash: String, create: Bool, _ body: (Int32?) throws -> T) throws -> T {
        guard let cas = try area(.blobs, create: create) else { return try body(nil) }
        let shard = String(hash.prefix(2))
        guard let fd = try handles.shard(shard, in: cas, display: blobs + "/" + shard, create: create) else { return try body(nil) }
        return try body(fd)
    }

    func entryLocation(_ key: CacheKey, in fd: Int32) -> FileLocation {
        FileLocation(fd, key.hex, display: entryPath(key))
    }

    func blobLocation(_ hash: String, in fd: Int32) -> FileLocation {
        FileLocation(fd, hash, display: blobPath(hash))
    }

    /// The entry stored under `key` (its use noted unless `notingUse` is
    /// false), nil when there is none or it cannot be read.
    public func entry(_ key: CacheKey, notingUse: Bool = true) -> CacheEntry? {
        try? readEntry(key, notingUse: notingUse)
    }

    /// The entry stored under `key` (its use noted unless `notingUse` is
    /// false), nil when there is none; throws `CacheError.damaged` for a
    /// file that is not a regular one or is larger than `CacheEntry.maxSize`,
    /// `invalidEntry` for one that does not decode, `unsafe` for a cache
    /// moon does not use. `parts`: as `CacheEntry.decode`.
    func readEntry(_ key: CacheKey, notingUse: Bool = true, parts: Bool = true) throws -> CacheEntry? {
        guard let ac = try area(.entries, create: false) else { return nil }
        guard let data = try BlobCopy.contents(of: entryLocation(key, in: ac), maxSize: Int64(CacheEntry.maxSize)) else { return nil }
        guard let entry = try? CacheEntry.decode(data, parts: parts) else { throw CacheError.invalidEntry("it is not an entry moon reads") }
        if notingUse { utimensat(ac, key.hex, nil, AT_SYMLINK_NOFOLLOW) }
        return entry
    }

    /// The keys of the entries stored here, in no order (at most `limit`;
    /// names that are not keys are left out). For `moon why`, which looks
    /// for the entries of one node.
    public func entryKeys(limit: Int) -> [CacheKey] {
        guard let ac = try? area(.entries, create: false) else { return [] }
        lseek(ac, 0, SEEK_SET)
        return Array(CacheUsage.names(in: ac).lazy.compactMap(CacheKey.init(hex:)).prefix(limit))
    }

    /// Removes the entry under `key` (a damaged one), never through a link.
    func removeEntry(_ key: CacheKey) {
        guard let ac = try? area(.entries, create: false) else { return }
        unlinkat(ac, key.hex, 0)
    }

    /// Why the cache cannot be used (nil: it can, or holds nothing yet):
    /// a file, or something unreadable, where it or one of its directories
    /// should be, or one of its directories is a link or another user's.
    public var problem: String? {
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            return code == ENOENT ? nil : "cannot use the cache \(path): \(path): \(String(cString: strerror(code)))"
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return "cannot use the cache \(path): \(path) is not a directory" }
        guard access(path, R_OK | X_OK) == 0 else { return "cannot use the cache \(path): \(path): \(String(cString: strerror(errno)))" }
        do {
            for area in [Area.entries, .blobs, .temporary] { _ = try self.area(area, create: false) }
            return nil
        } catch CacheError.unsafe(let why) {
            return "cannot use the cache \(path): \(why)"
        } catch CacheError.io(let what, let code) where code == ENOTDIR {
            return "cannot use the cache \(path): \(what) is not a directory"
        } catch {
            return "cannot use the cache \(path): \(error)"
        }
    }

    /// Whether anything was ever stored here (a cheap look before fingerprinting for a forecast).
    public var hasEntries: Bool {
        ((try? area(.entries, create: false)) ?? nil) != nil
    }

    /// Whether an entry is stored under `key` (not whether it is readable).
    public func hasEntry(_ key: CacheKey) -> Bool {
        guard let ac = (try? area(.entries, create: false)) ?? nil else { return false }
        var info = stat()
        return fstatat(ac, key.hex, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Stores `entry` under `key`, replacing any older one; the entry file's size.
    @discardableResult
    public func store(_ entry: CacheEntry, as key: CacheKey) throws -> Int {
        let data = try entry.encoded()
        try store(entryData: data, as: key)
        return data.count
    }

    func store(entryData data: Data, as key: CacheKey) throws {
        let temp = try temporaryLocation()
        try BlobCopy.write(data, to: temp)
        do {
            guard let ac = try area(.entries, create: true) else { throw CacheError.io("cannot create \(entries)", ENOENT) }
            try rename(temp, to: entryLocation(key, in: ac))
        } catch {
            temp.unlink()
            throw error
        }
    }

    public func hasBlob(_ hash: String) -> Bool {
        (try? withShard(hash, create: false) { fd -> Bool in
            guard let fd else { return false }
            var info = stat()
            return fstatat(fd, hash, &info, AT_SYMLINK_NOFOLLOW) == 0
        }) ?? false
    }

    /// Stores the file at `source` as a blob; its hash and size, and whether
    /// this store put it there (false: it was there already). `shouldStop`
    /// ends the copy (`CacheError.stopped`, nothing left behind).
    func storeBlob(copying source: String, shouldStop: () -> Bool = { false }) throws -> (hash: String, size: Int64, placed: Bool) {
        let temp = try temporaryLocation()
        let (hash, size) = try BlobCopy.copy(from: FileLocation(path: source), to: temp, shouldStop: shouldStop)
        let placed = try placeBlob(temp, hash: hash, size: size)
        return (hash, size, placed)
    }

    /// Moves a finished temporary blob into place; when it is there already
    /// (the same bytes: a regular file of `size`, when given), notes its use
    /// instead. Whether it was moved.
    @discardableResult
    func placeBlob(_ temp: FileLocation, hash: String, size: Int64? = nil) throws -> Bool {
        do {
            return try withShard(hash, create: true) { shard in
                guard let shard else { throw CacheError.io("cannot create \(blobs)/\(hash.prefix(2))", ENOENT) }
                var info = stat()
                if fstatat(shard, hash, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                   size.map({ Int64(info.st_size) == $0 }) ?? true {
                    temp.unlink()
                    utimensat(shard, hash, nil, AT_SYMLINK_NOFOLLOW)
                    return false
                }
                try rename(temp, to: blobLocation(hash, in: shard))
                return true
            }
        } catch {
            temp.unlink()
            throw error
        }
    }

    /// Removes blob `hash` (one a failed store wrote, or a damaged one).
    func removeBlob(_ hash: String) {
        _ = try? withShard(hash, create: false) { fd in
            if let fd { unlinkat(fd, hash, 0) }
        }
    }

    /// Copies blob `hash`, of `size` bytes by its entry, to a new file
    /// `destination` with `mode`, checking its bytes on the way: a blob
    /// changed on disk, not a regular file, or of another size (found
    /// before it is read) is removed and refused. `shouldStop` ends the copy (`CacheError.stopped`).
    func copyBlob(_ hash: String, size: Int64?, to destination: FileLocation, mode: mode_t,
                  shouldStop: () -> Bool = { false }) throws -> Int64 {
        try copyBlob(hash, size: size, cleanUp: destination.unlink) { source in
            try BlobCopy.copy(from: source, to: destination, mode: mode, expectedSize: size, shouldStop: shouldStop)
        }
    }

    /// `copyBlob` into `output`, a new file the caller made with `mode` (and closes), shown as `display`.
    func copyBlob(_ hash: String, size: Int64?, into output: Int32, display: String, mode: mode_t,
                  shouldStop: () -> Bool = { false }) throws -> Int64 {
        try copyBlob(hash, size: size, cleanUp: {}) { source in
            try BlobCopy.copy(from: source, into: output, display: display, mode: mode, expectedSize: size, shouldStop: shouldStop)
        }
    }

    /// Blob `hash` copied by `copy`, checked against its hash and `size`;
    /// `cleanUp` removes a copy whose bytes do not match.
    private func copyBlob(_ hash: String, size: Int64?, cleanUp: () -> Void,
                          _ copy: (FileLocation) throws -> (hash: String, size: Int64)) throws -> Int64 {
        try withShard(hash, create: false) { shard in
            guard let shard else { throw CacheError.missingBlob(hash) }
            let source = blobLocation(hash, in: shard)
            let copied: (hash: String, size: Int64)
            do {
                copied = try copy(source)
            } catch CacheError.io(_, ENOENT) where faccessat(shard, hash, F_OK, AT_SYMLINK_NOFOLLOW) != 0 {
                throw CacheError.missingBlob(hash)
            } catch CacheError.damaged(let path, let why) {
                source.unlink()
                throw CacheError.damaged(path, why)
            } catch let mismatch as BlobCopy.SizeMismatch {
                // Content-addressed: a blob of another size cannot have its hash's bytes.
                source.unlink()
                throw CacheError.damaged(source.display, "has a size of \(mismatch.size) bytes, not the \(size ?? -1) its entry says: "
                    + "it does not match its hash")
            }
            guard copied.hash == hash else {
                cleanUp()
                source.unlink()
                throw CacheError.corruptBlob(hash)
            }
            return copied.size
        }
    }

    /// Opens blob `hash` for reading (nil: it is not there, or is not a regular file).
    func openBlob(_ hash: String) -> CacheFile? {
        (try? withShard(hash, create: false) { fd in
            try fd.flatMap { try CacheFile.open(blobLocation(hash, in: $0)) }
        }) ?? nil
    }

    func entryData(_ key: CacheKey) -> Data? {
        guard let ac = (try? area(.entries, create: false)) ?? nil else { return nil }
        return (try? BlobCopy.contents(of: entryLocation(key, in: ac), maxSize: Int64(CacheEntry.maxSize))) ?? nil
    }

    /// A fresh name in `tmp/` (the directories made as needed).
    func temporaryLocation() throws -> FileLocation {
        guard let tmp = try area(.temporary, create: true) else { throw CacheError.io("cannot create \(temporary)", ENOENT) }
        let name = TemporaryName.next()
        return FileLocation(tmp, name, display: temporary + "/" + name)
    }

    private func rename(_ temp: FileLocation, to final: FileLocation) throws {
        guard renameat(temp.directory, temp.name, final.directory, final.name) == 0 else {
            let code = errno
            temp.unlink()
            throw CacheError.io("cannot write \(final.display)", code)
        }
    }

    /// Opens `name` in the directory `parent` as a directory, never through
    /// a link, made when missing and `create`; nil when missing. A link or
    /// another user's directory (root's excepted) is `CacheError.unsafe`.
    static func openDirectory(_ name: String, in parent: Int32, display: String, create: Bool) throws -> Int32? {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var fd = openat(parent, name, flags)
        if fd < 0 && errno == ENOENT && create {
            if mkdirat(parent, name, 0o777) != 0 && errno != EEXIST { throw CacheError.io("cannot create the directory \(display)", errno) }
            fd = openat(parent, name, flags)
        }
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            var info = stat()
            if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
                throw CacheError.unsafe("\(display) is a symbolic link; moon never follows a link inside its cache")
            }
            throw CacheError.io(code == ENOTDIR ? display : "cannot open \(display)", code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw CacheError.io("cannot open \(display)", code)
        }
        guard info.st_uid == userID || info.st_uid == 0 else {
            close(fd)
            throw CacheError.unsafe("\(display) belongs to user \(info.st_uid), not to you; moon does not use another user's cache")
        }
        return fd
    }

    /// The user moon runs as (asked once: every shard a restore opens is checked against it).
    private static let userID = geteuid()

    /// `mkdir -p`, failing with the error that stopped it: a file where a
    /// directory should be is ENOTDIR, not a guess.
    static func makeDirectories(_ path: String) throws {
        if isDirectory(path) { return }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
            if mkdir(prefix, 0o777) == 0 { continue }
            let code = errno
            guard code == EEXIST else { throw CacheError.io("cannot create the directory \(prefix)", code) }
            guard isDirectory(prefix) else {
                throw CacheError.io("cannot create the directory \(path)" + (prefix == path ? "" : " below \(prefix)"), ENOTDIR)
            }
        }
    }

    /// Whether `path` is a directory (or a link to one).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The open directories `v1/ac`, `v1/cas` and `v1/tmp`, opened once each
    /// (from the directory as given, then without following links) and kept,
    /// and the shards of `cas` as they are first used: a restore or store
    /// costs no path walk. One that was removed since (a cache deleted while
    /// `moon run --watch` goes on, a shard a prune emptied) is opened again;
    /// the old descriptor is kept open, so no thread ever uses a number reused by another file.
    final class Handles: @unchecked Sendable {
        let path: String
        let root: String
        private let lock = Mutex(())
        private var open: [String: Int32] = [:]
        private var shards: [String: Int32] = [:]
        private var retired: [Int32] = []

        init(path: String, root: String) {
            self.path = path
            self.root = root
        }

        deinit {
            for fd in open.values { close(fd) }
            for fd in shards.values { close(fd) }
            for fd in retired { close(fd) }
        }

        /// The shard `name` of the open `cas` (checked as `openDirectory` checks it when first opened).
        func shard(_ name: String, in cas: Int32, display: String, create: Bool) throws -> Int32? {
            try lock.withLock { _ in
                if let fd = shards[name] {
                    var info = stat()
                    if fstat(fd, &info) == 0 && info.st_nlink > 0 { return fd }
                    shards[name] = nil
                    retired.append(fd)
                }
                guard let fd = try CacheDirectory.openDirectory(name, in: cas, display: display, create: create) else { return nil }
                shards[name] = fd
                return fd
            }
        }

        func area(_ name: String, create: Bool) throws -> Int32? {
            return try lock.withLock { _ in
                if let fd = open[name] {
                    var info = stat()
                    if fstat(fd, &info) == 0 && info.st_nlink > 0 { return fd }
                    open[name] = nil
                    retired.append(fd)
                }
                // The directory as given is the user's word (it may be a link, say ~/.cache to another disk).
                var top = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if top < 0 && errno == ENOENT && create {
                    try CacheDirectory.makeDirectories(path)
                    top = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                }
                guard top >= 0 else {
                    let code = errno
                    if code == ENOENT { return nil }
                    throw CacheError.io(code == ENOTDIR ? path : "cannot open \(path)", code)
                }
                defer { close(top) }
                guard let v1 = try CacheDirectory.openDirectory("v1", in: top, display: root, create: create) else { return nil }
                defer { close(v1) }
                guard let fd = try CacheDirectory.openDirectory(name, in: v1, display: root + "/" + name, create: create) else { return nil }
                open[name] = fd
                return fd
            }
        }
    }
}
