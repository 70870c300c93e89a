import Foundation
import Glibc

/// The local cache on disk: entries under `ac/<key>` (JSON, `CacheEntry`)
/// and content-addressed blobs under `cas/<2 hex>/<hash>`, as a Bazel HTTP
/// cache names them. Every write goes to a temporary file in `tmp/` and is
/// renamed into place, so two moon processes can write the same entry or
/// blob at once (the last rename wins, with the same bytes) and a reader
/// never sees half a file. An entry's modification time is its last use
/// (`prune` removes the least recently used first).
public struct CacheDirectory: Sendable {
    /// The directory as given (`--cache-dir`, …).
    public let path: String
    let root: String

    public init(path: String) {
        self.path = path
        root = path.hasSuffix("/") ? path + "v1" : path + "/v1"
    }

    var entries: String { root + "/ac" }
    var blobs: String { root + "/cas" }
    var temporary: String { root + "/tmp" }

    func entryPath(_ key: CacheKey) -> String { entries + "/" + key.hex }
    func blobPath(_ hash: String) -> String { blobs + "/" + hash.prefix(2) + "/" + hash }

    /// The entry stored under `key` (its use noted unless `notingUse` is
    /// false), nil when there is none or it cannot be read.
    public func entry(_ key: CacheKey, notingUse: Bool = true) -> CacheEntry? {
        try? readEntry(key, notingUse: notingUse)
    }

    /// The entry stored under `key` (its use noted unless `notingUse` is
    /// false), nil when there is none; throws `CacheError.damaged` for a
    /// file that is not a regular one or is larger than `CacheEntry.maxSize`,
    /// `invalidEntry` for one that does not decode.
    func readEntry(_ key: CacheKey, notingUse: Bool = true) throws -> CacheEntry? {
        guard let data = try BlobCopy.contents(of: entryPath(key), maxSize: Int64(CacheEntry.maxSize)) else { return nil }
        guard let entry = try? CacheEntry.decode(data) else { throw CacheError.invalidEntry("it is not an entry moon reads") }
        if notingUse { touch(entryPath(key)) }
        return entry
    }

    /// Why the cache cannot be read (nil: it can, or holds nothing yet):
    /// a file, or something unreadable, where it or one of its directories should be.
    public var problem: String? {
        for directory in [path, root, entries, blobs] {
            var info = stat()
            guard stat(directory, &info) == 0 else {
                let code = errno
                return code == ENOENT ? nil : "cannot use the cache \(path): \(directory): \(String(cString: strerror(code)))"
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else { return "cannot use the cache \(path): \(directory) is not a directory" }
            guard access(directory, R_OK | X_OK) == 0 else {
                return "cannot use the cache \(path): \(directory): \(String(cString: strerror(errno)))"
            }
        }
        return nil
    }

    /// Whether anything was ever stored here (a cheap look before fingerprinting for a forecast).
    public var hasEntries: Bool {
        access(entries, F_OK) == 0
    }

    /// Whether an entry is stored under `key` (not whether it is readable).
    public func hasEntry(_ key: CacheKey) -> Bool {
        access(entryPath(key), F_OK) == 0
    }

    /// Stores `entry` under `key`, replacing any older one.
    public func store(_ entry: CacheEntry, as key: CacheKey) throws {
        try store(entryData: try entry.encoded(), as: key)
    }

    func store(entryData data: Data, as key: CacheKey) throws {
        let temp = try temporaryName()
        try BlobCopy.write(data, to: temp)
        try rename(temp, to: entryPath(key), directory: entries)
    }

    public func hasBlob(_ hash: String) -> Bool {
        access(blobPath(hash), F_OK) == 0
    }

    /// Stores the file at `source` as a blob; its hash and size. `shouldStop`
    /// ends the copy (`CacheError.stopped`, nothing left behind).
    func storeBlob(copying source: String, shouldStop: () -> Bool = { false }) throws -> (hash: String, size: Int64) {
        let temp = try temporaryName()
        let (hash, size) = try BlobCopy.copy(from: source, to: temp, shouldStop: shouldStop)
        try placeBlob(temp, hash: hash, size: size)
        return (hash, size)
    }

    /// Moves a finished temporary blob into place; when it is there already
    /// (the same bytes: a regular file of `size`, when given), notes its use instead.
    func placeBlob(_ temp: String, hash: String, size: Int64? = nil) throws {
        let final = blobPath(hash)
        var info = stat()
        if lstat(final, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, size.map({ Int64(info.st_size) == $0 }) ?? true {
            unlink(temp)
            touch(final)
            return
        }
        try rename(temp, to: final, directory: blobs + "/" + hash.prefix(2))
    }

    /// Copies blob `hash`, of `size` bytes by its entry, to a new file
    /// `destination` with `mode`, checking its bytes on the way: a blob
    /// changed on disk, not a regular file, or of another size (found
    /// before it is read) is removed and refused. `shouldStop` ends the copy (`CacheError.stopped`).
    func copyBlob(_ hash: String, size: Int64?, to destination: String, mode: mode_t,
                  shouldStop: () -> Bool = { false }) throws -> Int64 {
        let source = blobPath(hash)
        let copied: (hash: String, size: Int64)
        do {
            copied = try BlobCopy.copy(from: source, to: destination, mode: mode, expectedSize: size, shouldStop: shouldStop)
        } catch CacheError.io(_, ENOENT) where access(source, F_OK) != 0 {
            throw CacheError.missingBlob(hash)
        } catch CacheError.damaged(let path, let why) {
            unlink(source)
            throw CacheError.damaged(path, why)
        } catch let mismatch as BlobCopy.SizeMismatch {
            // Content-addressed: a blob of another size cannot have its hash's bytes.
            unlink(source)
            throw CacheError.damaged(source, "has a size of \(mismatch.size) bytes, not the \(size ?? -1) its entry says: "
                + "it does not match its hash")
        }
        guard copied.hash == hash else {
            unlink(destination)
            unlink(source)
            throw CacheError.corruptBlob(hash)
        }
        return copied.size
    }

    func entryData(_ key: CacheKey) -> Data? {
        try? BlobCopy.contents(of: entryPath(key), maxSize: Int64(CacheEntry.maxSize))
    }

    /// A fresh name in `tmp/` (the directories made as needed).
    func temporaryName() throws -> String {
        try Self.makeDirectories(temporary)
        return temporary + "/\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }

    private func rename(_ temp: String, to final: String, directory: String) throws {
        if Glibc.rename(temp, final) == 0 { return }
        if errno == ENOENT {
            try Self.makeDirectories(directory)
            if Glibc.rename(temp, final) == 0 { return }
        }
        let code = errno
        unlink(temp)
        throw CacheError.io("cannot write \(final)", code)
    }

    func touch(_ path: String) {
        utimensat(AT_FDCWD, path, nil, 0)
    }

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
}
