import Foundation
import Glibc
import MoonState
import MoonSystem

/// Gathers what a node produced into a cache entry: its declared outputs'
/// plain paths (each a file, a link, or a directory taken whole: files,
/// subdirectories, links, modes, but no tool's directory such as `.git`) and each file a wildcard pattern matches,
/// each one root. The files' bytes go into the cache's blobs as they are read.
struct OutputCollector {
    let root: String
    let cache: CacheDirectory
    /// A file larger than this is not stored (`CacheError.tooLarge`): the
    /// cache's own size limit, which it could never keep.
    var maxFileSize: Int64 = .max
    /// Ends the store within a block (`CacheError.stopped`).
    var shouldStop: () -> Bool = { false }

    /// The roots and files of `outputs`, relative to `root`; nil when nothing
    /// is there (but empty when nothing is declared). `placed` gets each blob this store put in the cache (not
    /// one that was there already): a store that fails later, say on a full
    /// disk, removes them rather than leave blobs no entry names.
    func collect(_ outputs: DeclaredOutputs, placed: inout [String]) throws -> (roots: [String], files: [CacheEntry.File])? {
        var roots = outputs.paths
        if outputs.patterns.contains(where: { !$0.hasPrefix("!") }) {
            let scan = SourceScanner(root: root).scan(matching: outputs.patterns)
            // A match that is not UTF-8 refuses the store, as a name inside a directory does: never dropped.
            if let name = scan.unnamable.first {
                throw CacheError.invalidEntry("'\(name)' has a name that is not UTF-8; "
                    + "the cache carries only UTF-8 names (rename the file, or set 'cache: false' on the node)")
            }
            roots += scan.files.map(\.path).filter { DeclaredOutputs.normalized($0) == $0 }
        }
        var files: [CacheEntry.File] = []
        var kept: [String] = []
        for path in Self.outermost(roots) where try add(path, into: &files, placed: &placed) {
            kept.append(path)
        }
        // A node that declares nothing (a check: sources, no generates) is
        // stored as an entry of no files: that it passed.
        let declaresNothing = outputs.paths.isEmpty && outputs.patterns.isEmpty
        return kept.isEmpty && !declaresNothing ? nil : (kept, files)
    }

    /// Adds `path` (and below it, for a directory); false when it does not exist.
    private func add(_ path: String, into files: inout [CacheEntry.File], placed: inout [String]) throws -> Bool {
        let full = fullPath(path)
        var info = stat()
        guard lstat(full, &info) == 0 else {
            if errno == ENOENT { return false }
            throw CacheError.io("cannot read \(path)", errno)
        }
        let mode = UInt32(info.st_mode) & 0o7777
        switch info.st_mode & S_IFMT {
        case S_IFLNK:
            let target = try Self.target(of: full, path)
            // What a restore refuses is not stored: an entry that would be a miss on every run.
            guard CacheEntry.staysInside(link: path, target: target) else {
                throw CacheError.invalidEntry("'\(path)' is a link to '\(target)', outside the graph file's directory; "
                    + "the cache carries only links that stay inside it")
            }
            files.append(.init(path: path, kind: .symlink, target: target))
        case S_IFDIR:
            files.append(.init(path: path, kind: .directory, mode: mode))
            // A directory is taken by the rule sources follow (`Glob`): all of it but a tool's `.git`, `.moon`, ….
            for name in try Self.names(in: full, path) where !Glob.isToolName(name) {
                _ = try add(path + "/" + name, into: &files, placed: &placed)
            }
        case S_IFREG:
            guard Int64(info.st_size) <= maxFileSize else { throw CacheError.tooLarge(path, Int64(info.st_size)) }
            let (hash, size, new) = try cache.storeBlob(copying: full, shouldStop: shouldStop)
            if new { placed.append(hash) }
            files.append(.init(path: path, kind: .file, mode: mode, hash: hash, size: size))
        default:
            // FIFOs, sockets, devices: not outputs a cache can carry.
            throw CacheError.invalidEntry("'\(path)' is \(Self.kind(info.st_mode)), not a file, directory or link")
        }
        return true
    }

    private func fullPath(_ path: String) -> String {
        root == "." ? path : root + "/" + path
    }

    /// A link's target as written; failures with their own error (`path`: for the message).
    static func target(of full: String, _ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(full, &buffer, buffer.count)
        guard count >= 0 else { throw CacheError.io("cannot read the link \(path)", errno) }
        let bytes = buffer[0..<count].map { UInt8(bitPattern: $0) }
        guard let target = String(validating: bytes, as: UTF8.self) else {
            throw CacheError.invalidEntry("the link '\(path)' has a target that is not UTF-8 ('\(FileName.shown(bytes))'); "
                + "the cache carries names byte-exact only when they are UTF-8")
        }
        return target
    }

    /// A directory's names, sorted by their bytes; failures with their own
    /// error. A name that is not UTF-8 refuses the store (`invalidEntry`,
    /// the name escaped): decoded with replacement it would name no file,
    /// and the restored directory would silently lack it.
    static func names(in full: String, _ path: String) throws -> [String] {
        guard let directory = opendir(full) else { throw CacheError.io("cannot list \(path)", errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = try FileName.withName(of: entry) { name, bytes -> String in
                guard let name else {
                    throw CacheError.invalidEntry("'\(path)/\(FileName.shown(bytes))' has a name that is not UTF-8; "
                        + "the cache carries only UTF-8 names (rename the file, or set 'cache: false' on the node)")
                }
                return name
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "of an unknown kind"
        }
    }

    /// The paths not inside another of them, each once, in order.
    static func outermost(_ paths: [String]) -> [String] {
        let all = Set(paths)
        var seen = Set<String>()
        var result: [String] = []
        for path in paths where seen.insert(path).inserted {
            var prefix = ""
            var inside = false
            for part in path.split(separator: "/").dropLast() {
                prefix += prefix.isEmpty ? String(part) : "/" + part
                if all.contains(prefix) { inside = true; break }
            }
            if !inside { result.append(path) }
        }
        return result
    }
}
