import Foundation
import Glibc
import MoonState

/// Gathers what a node produced into a cache entry: its declared outputs'
/// plain paths (each a file, a link, or a directory taken whole: files,
/// subdirectories, links, modes) and each file a wildcard pattern matches,
/// each one root. The files' bytes go into the cache's blobs as they are read.
struct OutputCollector {
    let root: String
    let cache: CacheDirectory
    /// A file larger than this is not stored (`CacheError.tooLarge`): the
    /// cache's own size limit, which it could never keep.
    var maxFileSize: Int64 = .max
    /// Ends the store within a block (`CacheError.stopped`).
    var shouldStop: () -> Bool = { false }

    /// The roots and files of `outputs`, relative to `root`; nil when nothing is there.
    func collect(_ outputs: DeclaredOutputs) throws -> (roots: [String], files: [CacheEntry.File])? {
        var roots = outputs.paths
        if outputs.patterns.contains(where: { !$0.hasPrefix("!") }) {
            roots += SourceScanner(root: root).files(matching: outputs.patterns).map(\.path).filter {
                DeclaredOutputs.normalized($0) == $0
            }
        }
        var files: [CacheEntry.File] = []
        var kept: [String] = []
        for path in Self.outermost(roots) where try add(path, into: &files) {
            kept.append(path)
        }
        return kept.isEmpty ? nil : (kept, files)
    }

    /// Adds `path` (and below it, for a directory); false when it does not exist.
    private func add(_ path: String, into files: inout [CacheEntry.File]) throws -> Bool {
        let full = fullPath(path)
        var info = stat()
        guard lstat(full, &info) == 0 else {
            if errno == ENOENT { return false }
            throw CacheError.io("cannot read \(path)", errno)
        }
        let mode = UInt32(info.st_mode) & 0o7777
        switch info.st_mode & S_IFMT {
        case S_IFLNK:
            files.append(.init(path: path, kind: .symlink, target: try Self.target(of: full, path)))
        case S_IFDIR:
            files.append(.init(path: path, kind: .directory, mode: mode))
            for name in try Self.names(in: full, path) { _ = try add(path + "/" + name, into: &files) }
        case S_IFREG:
            guard Int64(info.st_size) <= maxFileSize else { throw CacheError.tooLarge(path, Int64(info.st_size)) }
            let (hash, size) = try cache.storeBlob(copying: full, shouldStop: shouldStop)
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
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A directory's names, sorted by their bytes; failures with their own error.
    static func names(in full: String, _ path: String) throws -> [String] {
        guard let directory = opendir(full) else { throw CacheError.io("cannot list \(path)", errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
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
