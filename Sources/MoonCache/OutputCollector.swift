import Foundation
import Glibc
import MoonState

/// Gathers what a node produced into a cache entry: each `generates`
/// pattern written as a plain path is one root (a file, a link, or a
/// directory taken whole: files, subdirectories, links, modes); a pattern
/// with wildcards contributes each file it matches as a root. The files'
/// bytes go into the cache's blobs as they are read.
struct OutputCollector {
    let root: String
    let cache: CacheDirectory

    /// The roots and files of `generates` (and of `extra` plain paths, such
    /// as the node's depfile), relative to `root`; nil when nothing matched.
    func collect(generates: [String], extra: [String]) throws -> (roots: [String], files: [CacheEntry.File])? {
        var roots: [String] = []
        var globs: [String] = []
        for pattern in generates {
            if Self.isPlainPath(pattern) {
                roots.append(Self.normalized(pattern))
            } else {
                globs.append(pattern)
            }
        }
        roots += extra.map(Self.normalized)
        if !globs.isEmpty {
            let negations = globs.filter { $0.hasPrefix("!") }
            if negations.count < globs.count {
                roots += SourceScanner(root: root).files(matching: globs).map(\.path)
            }
        }
        roots = Self.outermost(roots.filter { !$0.isEmpty && $0 != "." && !$0.hasPrefix("/") && !$0.split(separator: "/").contains("..") })
        var files: [CacheEntry.File] = []
        var kept: [String] = []
        for path in roots where try add(path, into: &files) {
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
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: full) else {
                throw CacheError.io("cannot read the link \(path)", EINVAL)
            }
            files.append(.init(path: path, kind: .symlink, target: target))
        case S_IFDIR:
            files.append(.init(path: path, kind: .directory, mode: mode))
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: full).sorted()
            } catch {
                throw CacheError.io("cannot list \(path)", EACCES)
            }
            for name in names { _ = try add(path + "/" + name, into: &files) }
        case S_IFREG:
            let (hash, size) = try cache.storeBlob(copying: full)
            files.append(.init(path: path, kind: .file, mode: mode, hash: hash, size: size))
        default:
            // FIFOs, sockets, devices: not outputs a cache can carry.
            throw CacheError.invalidEntry("\(path) is not a file, directory or link")
        }
        return true
    }

    private func fullPath(_ path: String) -> String {
        root == "." ? path : root + "/" + path
    }

    /// A pattern without wildcards, escapes or negation names one path.
    static func isPlainPath(_ pattern: String) -> Bool {
        !pattern.contains(where: { "*?[\\".contains($0) }) && !pattern.hasPrefix("!")
    }

    static func normalized(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        while parts.last == "" { parts.removeLast() }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
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
