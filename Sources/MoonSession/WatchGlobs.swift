import MoonState

/// Globs, each standing for a node, asked which match a changed path. A
/// plain path (most `generates`, and the sources of a fan-out's instances)
/// is found by looking the path and its directories up; only patterns with
/// wildcards are matched one by one. So classifying a change costs the
/// path's depth plus the wildcard patterns, not a match against every
/// instance's globs.
package struct WatchGlobs {
    private var literal: [String: [Int]] = [:]
    private var patterns: [(include: Glob, exclude: [Glob], node: Int)] = []
    /// The directories above each glob's files (a pattern's base included).
    private var parents: Set<String> = []
    /// Every node a glob stands for.
    package private(set) var nodes = Set<Int>()
    /// Every glob's pattern, as written.
    package private(set) var patternsWritten: [String] = []

    package mutating func add(_ include: Glob, exclude: [Glob], node: Int) {
        nodes.insert(node)
        patternsWritten.append(include.pattern)
        if include.isLiteral, !include.base.isEmpty, exclude.isEmpty {
            literal[include.base, default: []].append(node)
        } else {
            patterns.append((include, exclude, node))
            if !include.base.isEmpty { parents.insert(include.base) }
        }
        var directory = include.base[...]
        while let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
            directory = directory[..<slash]
            parents.insert(String(directory))
        }
    }

    /// The nodes whose globs match `path` (relative to the graph's directory, or absolute).
    package func nodes(matching path: String) -> [Int] {
        var found: [Int] = []
        visit(path) { found.append($0); return false }
        return found
    }

    /// Whether a glob matches `path`.
    package func matches(_ path: String) -> Bool {
        var any = false
        visit(path) { _ in any = true; return true }
        return any
    }

    /// Whether `path` is a directory above a glob's files.
    package func isParent(_ path: String) -> Bool {
        parents.contains(path)
    }

    /// Calls `body` with each node whose glob matches `path` until it returns true.
    private func visit(_ path: String, _ body: (Int) -> Bool) {
        // A plain path matches itself and every file below it.
        var prefix = path[...]
        while !prefix.isEmpty {
            for node in literal[String(prefix)] ?? [] where body(node) { return }
            guard let slash = prefix.lastIndex(of: "/") else { break }
            prefix = prefix[..<slash]
        }
        for pattern in patterns
        where WatchInputs.glob(pattern.include, matches: path) && !pattern.exclude.contains(where: { WatchInputs.glob($0, matches: path) }) {
            if body(pattern.node) { return }
        }
    }
}
