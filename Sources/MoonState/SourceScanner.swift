#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonSystem

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
    /// Files whose names are not UTF-8 are not in it: `scan` reports them.
    public func files(matching patterns: [String]) -> [ScannedFile] {
        scan(matching: patterns).files
    }

    /// `files(matching:)`, and the matches it cannot name: a file whose path
    /// is not UTF-8 has no String that opens it (see `FileName`), so the
    /// caller must refuse it, never skip it.
    ///
    /// `leavingOut`: a node's own `generates`. What they mean is not its
    /// source (a run would change its own inputs, and it would never be up
    /// to date), unless a `sources` pattern spells that very file (a node
    /// that rewrites a file in place).
    ///
    /// `memo`: stats this run took already (`StatMemo`), so a path named
    /// outright and walked by a glob too is stat'ed once.
    public func scan(matching patterns: [String], leavingOut generates: [String] = [], memo: StatMemo? = nil) -> SourceScan {
        // The common `sources: [src/a.c]`: one plain file, one stat, and
        // none of the matching below (a compile step's check does this alone).
        if patterns.count == 1, !patterns[0].hasPrefix("!"), Glob.isPlainPath(patterns[0]),
           let (stat, kind) = memo?.stat(patterns[0], self) ?? FileStat.of(fullPath(patterns[0])), kind == .file {
            return SourceScan(files: [ScannedFile(path: patterns[0], stat: stat)], unnamable: [], directories: nil)
        }
        var includes: [Glob] = []
        var excludes: [Glob] = []
        for pattern in patterns {
            if pattern.hasPrefix("!") { excludes.append(Glob(String(pattern.dropFirst()))) } else { includes.append(Glob(pattern)) }
        }
        var result: [ScannedFile] = []
        var unnamable: [[UInt8]] = []
        var listing = Listing()
        for glob in includes { expand(glob, into: &result, unnamable: &unnamable, listing: &listing, memo: memo) }
        if !excludes.isEmpty {
            result.removeAll { file in excludes.contains { Self.glob($0, matches: file.path) } }
            unnamable.removeAll { path in excludes.contains { Self.glob($0, matchesBytes: path) } }
        }
        // (Files the patterns name outright stay: the common `sources: [src/a.c]` needs no matching here.)
        let literals = includes.lazy.filter(\.isLiteral).map(\.base)
        if !generates.isEmpty, !result.isEmpty, !result.allSatisfy({ file in literals.contains(file.path) }) {
            let written = DeclaredPaths(generates)
            let named = Set(literals)
            result.removeAll { file in written.contains(file.path) && !named.contains(file.path) }
        }
        if includes.count > 1 {
            var seen = Set<String>()
            seen.reserveCapacity(result.count)
            result.removeAll { !seen.insert($0.path).inserted }
            var seenBytes = Set<[UInt8]>()
            unnamable.removeAll { !seenBytes.insert($0).inserted }
        }
        return SourceScan(files: result, unnamable: unnamable.map { FileName.shown($0) },
                          directories: listing.vouched ? listing.directories : nil)
    }

    /// The directories a scan listed, and whether their stats vouch for what it found.
    struct Listing {
        var directories: [String] = []
        var vouched = true
    }

    /// Whether the pattern matches something: for a path without wildcards,
    /// that it exists (a file or a directory); else that some file matches.
    public func exists(_ pattern: String, memo: StatMemo? = nil) -> Bool {
        let glob = Glob(pattern)
        if glob.isLiteral { return (memo?.stat(glob.base, self) ?? FileStat.of(fullPath(glob.base))) != nil }
        var found: [ScannedFile] = []
        var unnamable: [[UInt8]] = []
        var listing = Listing()
        expand(glob, into: &found, unnamable: &unnamable, listing: &listing, memo: memo)
        return !found.isEmpty || !unnamable.isEmpty
    }

    /// Whether `glob` means the file at `path` (relative to the graph's
    /// directory, or absolute), by the rule `Glob` states: the one question
    /// the cache, watch mode and the forecast ask of a path, so they agree
    /// with this scanner's walk.
    public static func glob(_ glob: Glob, matches path: String) -> Bool {
        if glob.base.isEmpty { return !path.hasPrefix("/") && glob.means(relativePath: path) }
        if path == glob.base { return glob.means(relativePath: "") }
        let prefix = glob.base.hasSuffix("/") ? glob.base : glob.base + "/"
        guard path.hasPrefix(prefix) else { return false }
        var rest = path.dropFirst(prefix.count)
        return rest.withUTF8 { glob.means(relativeBytes: $0) }
    }

    /// `glob(_:matches:)` for a path that is not UTF-8.
    static func glob(_ glob: Glob, matchesBytes path: [UInt8]) -> Bool {
        var rest = path[...]
        if !glob.base.isEmpty {
            let base = Array(glob.base.utf8)
            guard rest.starts(with: base) else { return false }
            rest = rest.dropFirst(base.count)
            if rest.isEmpty { return glob.takesBaseWhole }
            if base.last != UInt8(ascii: "/") {
                guard rest.first == UInt8(ascii: "/") else { return false }
                rest = rest.dropFirst()
            }
        } else if path.first == UInt8(ascii: "/") {
            return false
        }
        return Array(rest).withUnsafeBufferPointer { glob.means(relativeBytes: $0) }
    }

    public func fullPath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.isEmpty { return root }
        return root == "." ? path : root + "/" + path
    }

    private func expand(_ glob: Glob, into result: inout [ScannedFile], unnamable: inout [[UInt8]], listing: inout Listing, memo: StatMemo?) {
        let basePath = fullPath(glob.base)
        guard let (stat, kind) = memo.map({ $0.stat(glob.base, self) }) ?? FileStat.of(basePath) else {
            listing.vouched = false
            return
        }
        if kind == .file {
            listing.vouched = false
            if glob.isLiteral { result.append(ScannedFile(path: glob.base, stat: stat)) }
            return
        }
        guard kind == .directory else {
            listing.vouched = false
            return
        }
        let fd = open(basePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            listing.vouched = false
            return
        }
        listing.directories.append(basePath)
        let prefix = glob.base.isEmpty ? "" : (glob.base == "/" ? "/" : glob.base + "/")
        walk(fd, prefix: prefix, unnamedPrefix: nil, glob: glob, states: glob.start, everything: glob.takesBaseWhole,
             into: &result, unnamable: &unnamable, listing: &listing, memo: memo?.isEmpty == false ? memo : nil)
    }

    /// Reads the directory `fd` (and closes it). `everything`: the pattern
    /// matched this directory, so every file below it matches, hidden ones
    /// included, except below a tool's name (`Glob.isToolName`).
    /// `unnamedPrefix`: the directory's path when it is not UTF-8; then
    /// what matches below it goes to `unnamable`. Over 60 lines: one loop
    /// over the entries that matches, recurses and records without
    /// allocating per entry (the walk of every source check).
    private func walk(_ fd: Int32, prefix: String, unnamedPrefix: [UInt8]?, glob: Glob, states: Glob.States, everything: Bool,
                      into result: inout [ScannedFile], unnamable: inout [[UInt8]], listing: inout Listing, memo: StatMemo?) {
        guard let dir = fdopendir(fd) else {
            close(fd)
            return
        }
        defer { closedir(dir) }
        // `raw`: the name's bytes when they are not UTF-8 (`name` is then only for sorting).
        var entries: [(name: String, raw: [UInt8]?, type: UInt8, next: Glob.States, matched: Bool)] = []
        // Per entry, its name's first 8 bytes as one number, for the sort.
        var leads: [(lead: UInt64, index: Int)] = []
        while let entry = readdir(dir) {
            let type = entry.pointee.d_type
            // Decoded only when the glob keeps it (`build/*.o` passes over as many `.d` files).
            let outcome = FileName.withBytes(of: entry) { name -> (String, [UInt8]?, Glob.States, Bool, UInt64)? in
                if name.first == UInt8(ascii: ".") {
                    if name.count == 1 || (name.count == 2 && name[1] == UInt8(ascii: ".")) { return nil }
                    if everything, Glob.isToolName(name) { return nil }
                }
                let next = everything ? states : glob.advance(states, name: name)
                if !everything && next.isEmpty { return nil }
                let decoded = FileName.decode(name)
                let raw = decoded == nil ? Array(name) : nil
                return (decoded ?? String(decoding: name, as: UTF8.self), raw, next, everything || glob.isMatch(next), Self.lead(name))
            }
            if let outcome {
                leads.append((outcome.4, entries.count))
                entries.append((outcome.0, outcome.1, type, outcome.2, outcome.3))
            }
        }
        // By name bytes: most names differ in their first 8 bytes, so most
        // comparisons are of two numbers, and the entries themselves never move.
        leads.sort { x, y in
            if x.lead != y.lead { return x.lead < y.lead }
            let a = entries[x.index], b = entries[y.index]
            if a.raw == nil && b.raw == nil { return Self.precedes(a.name, b.name) }
            return (a.raw ?? Array(a.name.utf8)).lexicographicallyPrecedes(b.raw ?? Array(b.name.utf8))
        }
        let known = memo?.knowsDirectory(prefix) == true ? memo : nil
        for (_, index) in leads {
            let (name, raw, type, next, matched) = entries[index]
            // The path below which `name` is unnamable, when it or its directory is not UTF-8.
            let unnamed: [UInt8]? = (raw != nil || unnamedPrefix != nil)
                ? (unnamedPrefix ?? Array(prefix.utf8)) + (raw ?? Array(name.utf8)) : nil
            func withCName<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
                guard let raw else { return name.withCString(body) }
                return (raw + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
            }
            var kind: FileStat.Kind
            var st = stat()
            var haveStat = false
            switch Int32(type) {
            case Int32(DT_DIR): kind = .directory
            case Int32(DT_REG): kind = .file
            default:
                // What a link leads to can change while its directory does not.
                listing.vouched = false
                guard withCName({ fstatat(dirfd(dir), $0, &st, 0) }) == 0 else { continue }
                haveStat = true
                kind = FileStat.kind(st)
                // Wildcards do not walk into linked directories (no cycles).
                if kind == .directory, Int32(type) == Int32(DT_LNK) { kind = .other }
            }
            switch kind {
            case .file:
                guard matched else { continue }
                if let unnamed {
                    unnamable.append(unnamed)
                    continue
                }
                let path = prefix + name
                // A regular file (`DT_REG`) another check stat'ed by this name.
                if !haveStat, let known = known?.known(path), let (stat, kind) = known, kind == .file {
                    result.append(ScannedFile(path: path, stat: stat))
                    continue
                }
                if !haveStat { guard withCName({ fstatat(dirfd(dir), $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else { continue } }
                result.append(ScannedFile(path: path, stat: FileStat(st)))
            case .directory:
                let child = withCName { openat(dirfd(dir), $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) }
                guard child >= 0 else {
                    listing.vouched = false
                    continue
                }
                if unnamed == nil { listing.directories.append(fullPath(prefix + name)) } else { listing.vouched = false }
                walk(child, prefix: unnamed == nil ? prefix + name + "/" : prefix, unnamedPrefix: unnamed.map { $0 + [UInt8(ascii: "/")] },
                     glob: glob, states: next, everything: matched, into: &result, unnamable: &unnamable, listing: &listing, memo: memo)
            case .other:
                continue
            }
        }
    }
}

extension SourceScanner {
    /// The first 8 bytes of a name, most significant first, zero-padded: in
    /// the order of the names' bytes (no name holds a zero byte).
    static func lead(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var lead: UInt64 = 0
        for k in 0..<8 { lead = lead << 8 | UInt64(k < name.count ? name[k] : 0) }
        return lead
    }

    /// Whether `a`'s UTF-8 bytes sort before `b`'s: one `memcmp`, where a
    /// generic walk of the two views costs tens of instructions a byte.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let p = x.baseAddress, let q = y.baseAddress {
                    let order = memcmp(p, q, common)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
    }
}

/// The files a list of patterns means (`!` patterns remove), by the rule
/// `Glob` states, for asking about one path at a time.
public struct DeclaredPaths: Sendable {
    private let includes: [Glob]
    private let excludes: [Glob]

    public init(_ patterns: [String]) {
        includes = patterns.filter { !$0.hasPrefix("!") }.map { Glob($0) }
        excludes = patterns.filter { $0.hasPrefix("!") }.map { Glob(String($0.dropFirst())) }
    }

    public func contains(_ path: String) -> Bool {
        includes.contains { SourceScanner.glob($0, matches: path) } && !excludes.contains { SourceScanner.glob($0, matches: path) }
    }
}

/// What `SourceScanner.scan` found.
public struct SourceScan: Sendable, Equatable {
    public var files: [ScannedFile]
    /// The matches whose paths are not UTF-8, as `FileName.shown` shows
    /// them (`src/caf\xE9.txt`), in the order of the walk.
    public var unnamable: [String]
    /// The directories listed, as the scan opened them, when their stats
    /// vouch for the result (a directory's mtime changes with every entry
    /// made, removed or renamed in it); nil when the result also depends on
    /// something else: a link or an entry of unknown type followed, a
    /// pattern's base that is a file or missing, a name that is not UTF-8.
    public var directories: [String]? = []
}
