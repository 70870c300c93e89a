import Foundation
import MoonGraph
import MoonSystem
import Synchronization

/// The compiled form of a graph file, so that a run whose graph did not
/// change skips the YAML parse and the decode (`GraphFile.load`). An entry is
/// the loaded `Graph` in `GraphBinary`'s form, keyed on everything the load
/// read and depended on: the stat (device, inode, size, mtime, ctime, mode,
/// owner) of the graph file, of each included and dotenv file (or that it is
/// absent), what each `for-each` glob listed (listed again on a use unless
/// the stats of the directories it listed are unchanged: see `Glob`), the
/// `--set` values, the working directory and path as given, whether moon
/// found the file by searching, and the stat of moon's own executable. Any
/// difference is a miss and a fresh load, which replaces the entry.
///
/// Only a load without diagnostics is stored, and only when every file it
/// read was last changed (mtime and ctime) at least `racyWindow` before the
/// load began: a file changed within the same timestamp tick as its entry
/// could look unchanged afterwards. Entries live in a directory that only
/// the user can write and are read only when the directory and the entry are
/// the user's and no one else can write them (docs/decisions.md, "The
/// compiled graph"). Every failure here is silent: the cache is a speed-up,
/// never a reason for a run to fail or to print.
package struct GraphCache: Sendable {
    /// `graphs` in the output cache's default directory: `MOON_CACHE_DIR`,
    /// `$XDG_CACHE_HOME/moon` or `~/.cache/moon`.
    package let directory: String

    /// A load that began less than this after a file it read was changed is not stored.
    package static let racyWindow: Int64 = 2_000_000_000

    /// Entries in the directory beyond which the least recently written are removed.
    package static let maxEntries = 256
    static let maxEntrySize = 256 << 20
    /// "moon-graph", a NUL, and the entry format's version.
    private static let magic: [UInt8] = Array("moon-graph\0".utf8) + [2]

    package init(directory: String) {
        self.directory = directory
    }

    /// The user's graph cache; nil when there is no place for it (no `HOME`).
    package static let standard: GraphCache? = {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        if let dir = variable("MOON_CACHE_DIR"), !dir.isEmpty {
            return GraphCache(directory: absolute(expandingTilde(dir, home: variable("HOME"))) + "/graphs")
        }
        if let xdg = variable("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return GraphCache(directory: xdg + "/moon/graphs") }
        guard let home = variable("HOME"), home.hasPrefix("/") else { return nil }
        return GraphCache(directory: home + "/.cache/moon/graphs")
    }()

    // MARK: What an entry is keyed on

    /// What `stat(2)` says of a file the load read, or that it was absent.
    struct Stamp: Equatable {
        var path: String
        var exists: Bool
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: Int64 = 0
        var mtime: Int64 = 0
        var ctime: Int64 = 0
        var mode: UInt32 = 0
        var owner: UInt32 = 0

        /// nil when `path` cannot be looked at for another reason than being absent.
        static func of(_ path: String) -> Stamp? {
            var info = stat()
            guard stat(path, &info) == 0 else { return errno == ENOENT || errno == ENOTDIR ? Stamp(path: path, exists: false) : nil }
            return Stamp(path: path, exists: true, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                         mtime: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                         ctime: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec),
                         mode: UInt32(info.st_mode), owner: UInt32(info.st_uid))
        }

        var isRegularFile: Bool { exists && mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
        var isDirectory: Bool { exists && mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    }

    /// One `for-each` glob and what it listed.
    struct Glob: Equatable {
        var directory: String
        var pattern: String
        var exclude: [String]
        var matches: [String]
        var unnamable: [String]
        /// The stats of the directories the listing read, each last changed
        /// `racyWindow` before the load: a directory's mtime and ctime change
        /// with every entry made, removed or renamed in it, so while they are
        /// unchanged the listing is too, and a use stats them instead of
        /// listing again. nil: listed again at every use (a directory changed
        /// too recently, or the listing followed a link, whose target can
        /// change while its directory does not: `SourceScan.directories`).
        var directories: [Stamp]?
    }

    struct Key: Equatable {
        /// The running executable, and the file its path names (under valgrind, the first is valgrind's).
        var build: Stamp
        var executable: Stamp
        var workingDirectory: String
        var path: String
        var discovered: Bool
        var overrides: [String: String]
        /// The graph file first, then each included and dotenv file in the order read.
        var files: [Stamp]
        var globs: [Glob]
        /// Not a key: the included paths the load returns beside the graph.
        var included: [String]
    }

    /// What one load read besides the graph file, recorded through the
    /// `GraphFileAccess` and the dotenv reader it is given.
    package final class Reads: Sendable {
        private struct Log {
            var files: [String] = []
            var globs: [Glob] = []
            /// Per glob, the directories its listing read (`GlobMatches.directories`).
            var listed: [[String]?] = []
        }
        private let log = Mutex(Log())

        package init() {}

        package func recording(_ access: GraphFileAccess) -> GraphFileAccess {
            GraphFileAccess(read: { [self] path in
                log.withLock { $0.files.append(path) }
                return access.read(path)
            }, glob: { [self] directory, pattern, exclude in
                let matches = access.glob(directory, pattern, exclude)
                log.withLock {
                    $0.globs.append(Glob(directory: directory, pattern: pattern, exclude: exclude, matches: matches.files,
                                         unnamable: matches.unnamable))
                    $0.listed.append(matches.directories)
                }
                return matches
            })
        }

        package func note(_ path: String) { log.withLock { $0.files.append(path) } }

        var files: [String] { log.withLock { $0.files } }
        var globs: [Glob] { log.withLock { $0.globs } }
        var listed: [[String]?] { log.withLock { $0.listed } }
    }

    /// The stat of the running executable and of the file its path names:
    /// an entry of another moon build is a miss.
    private static let build: (running: Stamp, named: Stamp)? = {
        guard let running = Stamp.of("/proc/self/exe"), running.isRegularFile else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        buffer[length] = 0
        guard let named = Stamp.of(String(cString: buffer)), named.isRegularFile else { return nil }
        return (running, named)
    }()

    /// The wall clock in nanoseconds, as file timestamps are.
    package static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    // MARK: Reading

    /// The graph and included paths stored for `path` loaded with
    /// `overrides`, when nothing the entry is keyed on changed; nil otherwise.
    /// `files` is the access the load would use, to list its globs again.
    package func lookup(_ path: String, overrides: [String: String], discovered: Bool,
                        files: GraphFileAccess) -> (graph: Graph, included: [String], globs: [FanOutGlob])? {
        guard let build = Self.build, let cwd = LinuxCalls.workingDirectory(), isPrivate(directory, directory: true),
              let bytes = readEntry(entryPath(cwd: cwd, path: path)) else { return nil }
        return bytes.withUnsafeBytes { raw -> (Graph, [String], [FanOutGlob])? in
            guard raw.count > Self.magic.count + 8, raw.prefix(Self.magic.count).elementsEqual(Self.magic) else { return nil }
            // A damaged length is a miss, never a trap: any value that does not fit the entry.
            let storedLength = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: Self.magic.count, as: UInt64.self))
            let keyStart = Self.magic.count + 8
            guard let keyLength = Int(exactly: storedLength), keyLength <= raw.count - keyStart else { return nil }
            var reader = GraphBinary.Reader(bytes: UnsafeRawBufferPointer(rebasing: raw[keyStart..<keyStart + keyLength]))
            guard let key = try? Key(reading: &reader), reader.offset == keyLength,
                  key.build == build.running, key.executable == build.named, key.workingDirectory == cwd, key.path == path, key.discovered == discovered,
                  key.overrides == overrides, key.files.first?.path == path,
                  key.files.allSatisfy({ Stamp.of($0.path) == $0 }) else { return nil }
            // A discovered graph reads only files that pass `DiscoveryTrust`, whose rule reaches beyond their own stat.
            if discovered, key.files.dropFirst().contains(where: { $0.exists && DiscoveryTrust.problem($0.path) != nil }) { return nil }
            for glob in key.globs {
                if let directories = glob.directories, directories.allSatisfy({ Stamp.of($0.path) == $0 }) { continue }
                let now = files.glob(glob.directory, glob.pattern, glob.exclude)
                guard now.files == glob.matches, now.unnamable == glob.unnamable else { return nil }
            }
            guard let graph = try? GraphBinary.decode(UnsafeRawBufferPointer(rebasing: raw[(keyStart + keyLength)...])) else { return nil }
            let globs = key.globs.map { FanOutGlob(directory: $0.directory, pattern: $0.pattern, exclude: $0.exclude, files: $0.matches) }
            return (graph, key.included, globs)
        }
    }

    /// The entry's bytes, when it is a regular file of the user's that no one else can write.
    private func readEntry(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
              info.st_mode & (S_IWGRP | S_IWOTH) == 0, info.st_size > 0, info.st_size <= Self.maxEntrySize else { return nil }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, size - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// Whether `path` is a directory (or file) of the user's that no other
    /// user can write; a link is not followed (a planted one leads elsewhere).
    private func isPrivate(_ path: String, directory: Bool) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == (directory ? S_IFDIR : S_IFREG) && info.st_uid == geteuid()
            && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    /// One entry per graph file as named from a working directory: a load with other `--set` values replaces it.
    private func entryPath(cwd: String, path: String) -> String {
        // FNV-1a over cwd, a 0 and path; written out by hand, as the generic
        // `+` of sequences and `String(_:radix:)` cost a start more than the hash.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for byte in cwd.utf8 { mix(byte) }
        mix(0)
        for byte in path.utf8 { mix(byte) }
        let digits = Array("0123456789abcdef".utf8)
        var name = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { name[i] = digits[Int((hash >> UInt64(60 - 4 * i)) & 0xf)] }
        return directory + "/" + String(decoding: name, as: UTF8.self)
    }

    // MARK: Writing

    /// Stores a load of `path` that began at `started` and read what `reads`
    /// recorded, unless a file it read changed too recently (or is not a
    /// regular file) or the directory is not the user's alone.
    package func store(_ graph: Graph, included: [String], path: String, overrides: [String: String], discovered: Bool,
                       reads: Reads, started: Int64) {
        guard let build = Self.build, let cwd = LinuxCalls.workingDirectory() else { return }
        var stamps: [Stamp] = []
        for file in [path] + reads.files {
            guard let stamp = Stamp.of(file) else { return }
            if stamp.exists {
                guard stamp.isRegularFile, stamp.mtime < started - Self.racyWindow, stamp.ctime < started - Self.racyWindow else { return }
            }
            stamps.append(stamp)
        }
        var globs = reads.globs
        for (index, listed) in reads.listed.enumerated() where index < globs.count {
            globs[index].directories = listed.flatMap { Self.directoryStamps($0, before: started - Self.racyWindow) }
        }
        let key = Key(build: build.running, executable: build.named, workingDirectory: cwd, path: path, discovered: discovered, overrides: overrides, files: stamps,
                      globs: globs, included: included)
        guard makeDirectory() else { return }
        var writer = GraphBinary.Writer()
        key.write(to: &writer)
        let keyBytes = writer.bytes
        let valueBytes = GraphBinary.encode(graph)
        var bytes = Self.magic
        withUnsafeBytes(of: UInt64(keyBytes.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += keyBytes
        bytes += valueBytes
        guard bytes.count <= Self.maxEntrySize else { return }
        write(bytes, to: entryPath(cwd: cwd, path: path))
    }

    /// The stats of `paths`, when each is a directory last changed before `limit` (nil otherwise).
    private static func directoryStamps(_ paths: [String], before limit: Int64) -> [Stamp]? {
        var stamps: [Stamp] = []
        stamps.reserveCapacity(paths.count)
        for path in paths {
            guard let stamp = Stamp.of(path), stamp.isDirectory, stamp.mtime < limit, stamp.ctime < limit else { return nil }
            stamps.append(stamp)
        }
        return stamps
    }

    /// The directory, made private to the user when missing; false when it is not the user's alone.
    private func makeDirectory() -> Bool {
        if isPrivate(directory, directory: true) { return true }
        var parent = ""
        for part in directory.split(separator: "/") {
            parent += "/" + part
            if mkdir(parent, 0o700) != 0 && errno != EEXIST { return false }
        }
        return isPrivate(directory, directory: true)
    }

    /// Writes a temporary file and renames it over the entry, so that a reader sees the old entry or the new one.
    private func write(_ bytes: [UInt8], to entry: String) {
        let temporary = directory + "/.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        close(fd)
        guard done == bytes.count, rename(temporary, entry) == 0 else {
            unlink(temporary)
            return
        }
        prune()
    }

    /// Keeps the directory to `maxEntries` entries, removing the least recently written.
    private func prune() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory), names.count > Self.maxEntries else { return }
        var entries: [(name: String, written: Int64)] = []
        for name in names {
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            entries.append((name, Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)))
        }
        entries.sort { $0.written < $1.written }
        for entry in entries.prefix(max(0, entries.count - Self.maxEntries)) { unlink(directory + "/" + entry.name) }
    }

    private static func expandingTilde(_ path: String, home: String?) -> String {
        guard let home, path == "~" || path.hasPrefix("~/") else { return path }
        return home + path.dropFirst()
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return (LinuxCalls.workingDirectory() ?? ".") + "/" + path
    }
}

// MARK: The key's form

extension GraphCache.Key {
    /// The stored properties written, in order (`GraphCacheTests` checks them against the type).
    static let fields = ["build", "executable", "workingDirectory", "path", "discovered", "overrides", "files", "globs", "included"]

    func write(to w: inout GraphBinary.Writer) {
        build.write(to: &w)
        executable.write(to: &w)
        w.string(workingDirectory)
        w.string(path)
        w.bool(discovered)
        let names = overrides.keys.sorted()
        w.int(names.count)
        for name in names {
            w.string(name)
            w.string(overrides[name]!)
        }
        w.array(files) { $1.write(to: &$0) }
        w.array(globs) { w, glob in
            w.string(glob.directory)
            w.string(glob.pattern)
            w.strings(glob.exclude)
            w.strings(glob.matches)
            w.strings(glob.unnamable)
            w.bool(glob.directories != nil)
            w.array(glob.directories ?? []) { $1.write(to: &$0) }
        }
        w.strings(included)
    }

    init(reading r: inout GraphBinary.Reader) throws {
        build = try GraphCache.Stamp(reading: &r)
        executable = try GraphCache.Stamp(reading: &r)
        workingDirectory = try r.string()
        path = try r.string()
        discovered = try r.bool()
        var overrides: [String: String] = [:]
        for _ in 0..<(try r.count()) {
            let name = try r.string()
            overrides[name] = try r.string()
        }
        self.overrides = overrides
        files = try r.array { try GraphCache.Stamp(reading: &$0) }
        globs = try r.array { r in
            var glob = GraphCache.Glob(directory: try r.string(), pattern: try r.string(), exclude: try r.strings(), matches: try r.strings(),
                                       unnamable: try r.strings())
            let stamped = try r.bool()
            let directories = try r.array { try GraphCache.Stamp(reading: &$0) }
            glob.directories = stamped ? directories : nil
            return glob
        }
        included = try r.strings()
    }
}

extension GraphCache.Stamp {
    static let fields = ["path", "exists", "device", "inode", "size", "mtime", "ctime", "mode", "owner"]

    func write(to w: inout GraphBinary.Writer) {
        w.string(path)
        w.bool(exists)
        w.int(Int(truncatingIfNeeded: device))
        w.int(Int(truncatingIfNeeded: inode))
        w.int(Int(size))
        w.int(Int(mtime))
        w.int(Int(ctime))
        w.int(Int(mode))
        w.int(Int(owner))
    }

    init(reading r: inout GraphBinary.Reader) throws {
        path = try r.string()
        exists = try r.bool()
        device = UInt64(truncatingIfNeeded: try r.int())
        inode = UInt64(truncatingIfNeeded: try r.int())
        size = Int64(try r.int())
        mtime = Int64(try r.int())
        ctime = Int64(try r.int())
        mode = UInt32(truncatingIfNeeded: try r.int())
        owner = UInt32(truncatingIfNeeded: try r.int())
    }
}

extension GraphCache.Glob {
    static let fields = ["directory", "pattern", "exclude", "matches", "unnamable", "directories"]
}
