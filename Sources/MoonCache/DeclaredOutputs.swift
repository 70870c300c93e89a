import Glibc
import MoonState

/// What a node may write, by its `generates` and its depfile: each pattern
/// written as a plain path is one root, taken whole (anything below it);
/// a pattern with wildcards allows each file it matches. The store collects
/// exactly these, and a restore writes an entry only when it holds nothing
/// else: an entry is data from a disk or a server, and one edited to write
/// `.git/hooks/pre-commit` or a source must be a miss, not a write.
public struct DeclaredOutputs: Sendable {
    /// The `generates` patterns as written.
    let generates: [String]
    /// The plain paths (generates, then the depfile), normalized, inside the graph's directory.
    let paths: [String]
    /// `generates` patterns the cache cannot carry: absolute, above the
    /// graph's directory, or with `..` before a wildcard.
    public let outside: [String]
    /// The `generates` patterns with wildcards it carries, as written (`!` ones remove matches).
    let patterns: [String]
    private let includes: [Glob]
    private let excludes: [Glob]

    public init(generates: [String], extra: [String] = []) {
        var paths: [String] = [], outside: [String] = [], patterns: [String] = []
        for pattern in generates {
            if Self.isPlainPath(pattern) {
                if let path = Self.normalized(pattern) { paths.append(path) } else { outside.append(pattern) }
                continue
            }
            // The scanner names a match as its pattern's base spells it.
            let base = pattern.hasPrefix("!") ? "" : Glob(pattern).base
            if base.isEmpty || Self.normalized(base) == base { patterns.append(pattern) } else { outside.append(pattern) }
        }
        paths += extra.compactMap(Self.normalized)
        self.generates = generates
        self.paths = paths
        self.outside = outside
        self.patterns = patterns
        includes = patterns.filter { !$0.hasPrefix("!") }.map { Glob($0) }
        excludes = patterns.filter { $0.hasPrefix("!") }.map { Glob(String($0.dropFirst())) }
    }

    /// Whether a wildcard pattern matches `path` (and no `!` pattern does).
    func matches(_ path: String) -> Bool {
        includes.contains { SourceScanner.glob($0, matches: path) } && !excludes.contains { SourceScanner.glob($0, matches: path) }
    }

    /// Why `entry` may not be restored (nil: it may): it writes something
    /// these outputs do not allow (only a plain path's tree, or a file or
    /// link a wildcard matches), or lacks a plain path or anything for a
    /// wildcard pattern (then the restored node would still miss an output).
    public func refusal(of entry: CacheEntry) -> String? {
        if let inconsistency = Self.inconsistency(of: entry) { return inconsistency }
        for root in entry.roots where !paths.contains(root) && !matches(root) {
            return "it writes '\(root)', which the node's generates do not name"
        }
        // Below a plain path, by the rule sources follow: never into a tool's `.git`, `.moon`, ….
        for file in entry.files where !paths.contains(where: { Self.isTaken(file.path, below: $0) }) {
            guard file.kind != .directory, matches(file.path) else {
                return "it writes '\(file.path)', which the node's generates do not name"
            }
        }
        for path in paths where !entry.files.contains(where: { $0.path == path }) {
            return "it lacks '\(path)', which the node's generates name"
        }
        for glob in includes where !entry.files.contains(where: { $0.kind != .directory && SourceScanner.glob(glob, matches: $0.path) }) {
            return "it has nothing matching '\(glob.pattern)', which the node's generates name"
        }
        return nil
    }

    /// The `generates` outputs a run did not leave, as the up-to-date check
    /// sees them (a link to a missing file is missing), each with why. An
    /// entry without them would be restored on every run and never be up to date.
    func notCreated(root: String) -> [String] {
        let scanner = SourceScanner(root: root)
        var missing: [String] = []
        // As written: `sub/../b.txt` needs `sub`, as the up-to-date check's `stat` does.
        for pattern in generates where !pattern.hasPrefix("!") && !scanner.exists(pattern) {
            guard Self.isPlainPath(pattern) else {
                missing.append("anything matching '\(pattern)'")
                continue
            }
            var info = stat()
            let dangling = lstat(scanner.fullPath(pattern), &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
            missing.append("'\(pattern)'" + (dangling ? " (a link to a missing file)" : ""))
        }
        return missing
    }

    /// Whether `path` is `root` or below it with no tool's name between
    /// (`Glob.isToolName`: `.git`, `.moon`, …), as a directory is taken by
    /// the rule sources follow.
    static func isTaken(_ path: String, below root: String) -> Bool {
        guard CacheEntry.isWithin(path, root) else { return false }
        return !path.utf8.dropFirst(root.utf8.count).split(separator: UInt8(ascii: "/")).contains { name in
            Array(name).withUnsafeBufferPointer { Glob.isToolName($0) }
        }
    }

    /// Why an entry's paths do not make one tree: a path below one the
    /// entry writes as a file or a link (nil: they do).
    static func inconsistency(of entry: CacheEntry) -> String? {
        var kinds: [String: CacheEntry.File.Kind] = [:]
        for file in entry.files { kinds[file.path] = file.kind }
        for file in entry.files {
            var parent = Substring(file.path)
            while let slash = parent.lastIndex(of: "/") {
                parent = parent[..<slash]
                if let kind = kinds[String(parent)], kind != .directory {
                    return "it writes '\(file.path)' below '\(parent)', which it writes as a \(kind == .symlink ? "link" : "file")"
                }
            }
        }
        return nil
    }

    /// A pattern without wildcards, escapes or negation names one path.
    static func isPlainPath(_ pattern: String) -> Bool {
        // Bytes, not Characters: every byte of these is ASCII, and no other character holds one.
        !pattern.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "\\") }
            && pattern.utf8.first != UInt8(ascii: "!")
    }

    /// `path` without `.` and empty parts, its `..` applied (`sub/../b.txt`
    /// is `b.txt`); nil when it is absolute or climbs above the graph's
    /// directory, or names that directory itself.
    static func normalized(_ path: String) -> String? {
        guard !path.hasPrefix("/") else { return nil }
        // Already plain parts between single slashes (`build/f.o`): itself.
        if CacheEntry.isPlain(path) { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == ".." {
                guard parts.popLast() != nil else { return nil }
            } else {
                parts.append(part)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }
}
