#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One file a glob matched, with its stat.
public struct ScannedFile: Sendable, Equatable {
    /// As the pattern spells it: relative to the graph's directory, or absolute.
    public var path: String
    public var stat: FileStat
}

/// Expands globs into files by walking directories with `openat`/`readdir`
/// and `fstatat` (no Foundation, one descriptor per level), descending only
/// where a pattern can still match. Symbolic links to files are followed;
/// symbolic links to directories are not walked into by wildcards (a
/// pattern's literal base may be one), so a link cycle cannot loop.
public struct SourceScanner: Sendable {
    /// The graph file's directory: relative patterns start here.
    public let root: String

    public init(root: String) {
        self.root = root.isEmpty ? "." : root
    }

    /// Every file the patterns match, without duplicates, in a fixed order:
    /// pattern by pattern, each directory's entries sorted by name bytes,
    /// depth first (sorting per directory costs far less than sorting 20,000 paths).
    /// A pattern starting with `!` removes what it matches from the others.
    public func files(matching patterns: [String]) -> [ScannedFile] {
        var includes: [Glob] = []
        var excludes: [Glob] = []
        for pattern in patterns {
            if pattern.hasPrefix("!") { excludes.append(Glob(String(pattern.dropFirst()))) } else { includes.append(Glob(pattern)) }
        }
        var result: [ScannedFile] = []
        for glob in includes { expand(glob, into: &result) }
        if !excludes.isEmpty {
            result.removeAll { file in excludes.contains { Self.glob($0, matches: file.path) } }
        }
        if includes.count > 1 {
            var seen = Set<String>()
            seen.reserveCapacity(result.count)
            result.removeAll { !seen.insert($0.path).inserted }
        }
        return result
    }

    /// Whether the pattern matches something: for a path without wildcards,
    /// that it exists (a file or a directory); else that some file matches.
    public func exists(_ pattern: String) -> Bool {
        let glob = Glob(pattern)
        if glob.isLiteral { return FileStat.of(fullPath(glob.base)) != nil }
        var found: [ScannedFile] = []
        expand(glob, into: &found)
        return !found.isEmpty
    }

    public static func glob(_ glob: Glob, matches path: String) -> Bool {
        if glob.base.isEmpty { return glob.matches(relativePath: path) }
        if path == glob.base { return glob.isLiteral }
        guard path.hasPrefix(glob.base + "/") else { return false }
        if glob.isLiteral { return true }
        return glob.matches(relativePath: String(path.dropFirst(glob.base.count + 1)))
    }

    public func fullPath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.isEmpty { return root }
        return root == "." ? path : root + "/" + path
    }

    private func expand(_ glob: Glob, into result: inout [ScannedFile]) {
        let basePath = fullPath(glob.base)
        guard let (stat, kind) = FileStat.of(basePath) else { return }
        if kind == .file {
            if glob.isLiteral { result.append(ScannedFile(path: glob.base, stat: stat)) }
            return
        }
        guard kind == .directory else { return }
        let fd = open(basePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let prefix = glob.base.isEmpty ? "" : (glob.base == "/" ? "/" : glob.base + "/")
        walk(fd, prefix: prefix, glob: glob, states: glob.start, everything: glob.isLiteral, into: &result)
    }

    /// Reads the directory `fd` (and closes it). `everything`: a pattern named
    /// this directory, so every file below it that is not hidden matches.
    private func walk(_ fd: Int32, prefix: String, glob: Glob, states: Glob.States, everything: Bool,
                      into result: inout [ScannedFile]) {
        guard let dir = fdopendir(fd) else {
            close(fd)
            return
        }
        defer { closedir(dir) }
        var entries: [(name: String, type: UInt8, next: Glob.States, matched: Bool)] = []
        while let entry = readdir(dir) {
            let type = entry.pointee.d_type
            let outcome: (name: String, next: Glob.States, matched: Bool)? = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: UInt8.self, capacity: 256) { bytes in
                    let length = strlen(UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self))
                    let name = UnsafeBufferPointer(start: bytes, count: length)
                    if name.first == UInt8(ascii: ".") {
                        if length == 1 || (length == 2 && name[1] == UInt8(ascii: ".")) { return nil }
                        if everything { return nil }
                    }
                    let next = everything ? states : glob.advance(states, name: name)
                    if !everything && next.isEmpty { return nil }
                    return (String(decoding: name, as: UTF8.self), next, everything || glob.isMatch(next))
                }
            }
            if let outcome { entries.append((outcome.name, type, outcome.next, outcome.matched)) }
        }
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for (name, type, next, matched) in entries {
            var kind: FileStat.Kind
            var st = stat()
            var haveStat = false
            switch Int32(type) {
            case Int32(DT_DIR): kind = .directory
            case Int32(DT_REG): kind = .file
            default:
                guard fstatat(dirfd(dir), name, &st, 0) == 0 else { continue }
                haveStat = true
                kind = FileStat.kind(st)
                // Wildcards do not walk into linked directories (no cycles).
                if kind == .directory, Int32(type) == Int32(DT_LNK) { kind = .other }
            }
            switch kind {
            case .file:
                guard matched else { continue }
                if !haveStat { guard fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue } }
                result.append(ScannedFile(path: prefix + name, stat: FileStat(st)))
            case .directory:
                let child = openat(dirfd(dir), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
                guard child >= 0 else { continue }
                walk(child, prefix: prefix + name + "/", glob: glob, states: next, everything: matched, into: &result)
            case .other:
                continue
            }
        }
    }
}
