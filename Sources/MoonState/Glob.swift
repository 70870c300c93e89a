/// A `sources:`/`generates:` pattern, relative to the graph file's directory
/// (or absolute). Segments are separated by `/`; in a segment `*` matches any
/// run of characters, `?` one, `[abc]`/`[a-z]`/`[!a]` a class, `\\x` the
/// character x; a segment `**` matches any number of directories, none
/// included. A segment whose wildcards are all escaped names one file, as a
/// plain path does.
///
/// The one rule for what a pattern means, which sources, generates, the
/// cache, watch mode and the forecast all follow (`means`, and the source
/// scanner's walk):
/// - As in a shell, a wildcard does not match a leading `.` unless the
///   pattern's segment starts with one (`*` skips `.env`, `.*` takes it).
/// - A pattern that matches a directory means every file below it, hidden
///   ones included: `data`, `data/` and `data/**` (whose `**` matches no
///   directory) all take `data/.result`; `out/*` takes `out/sub/.x`.
/// - Except what belongs to tools rather than to the project
///   (`isToolName`): `.git`, `.hg`, `.svn`, `.bzr`, `.jj`, moon's
///   own `.moon` and its temporary `.moon-…` files. No wildcard and no
///   directory taken whole reaches them; only a pattern that spells the
///   name does (`.git/HEAD`). So `sources: [.]` is up to date after a run.
///
/// Matching works on the bytes of names, and the states of a walk are a bit
/// set, so following 20,000 files allocates nothing per name.
public struct Glob: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case literal([UInt8])
        case wildcard([UInt8])
        case globstar
    }

    /// The pattern as written.
    public let pattern: String
    /// The directory the walk starts from: the leading segments without
    /// wildcards ("" for the graph's directory).
    public let base: String
    /// The segments after `base`; empty when the pattern has no wildcard.
    let segments: [Segment]

    /// At most this many segments after the base (the states are a 64-bit set).
    static let maxSegments = 62

    public init(_ pattern: String) {
        self.pattern = pattern
        // Most patterns name one file as a plain path: that is the base.
        if Glob.isPlainPath(pattern) {
            base = pattern
            segments = []
            return
        }
        let absolute = pattern.hasPrefix("/")
        // Split on the byte `/`, as the file system does (and without
        // `String.split`'s per-character walk: every check builds its node's globs).
        let parts = Array(pattern.utf8).split(separator: UInt8(ascii: "/")).filter { !$0.elementsEqual([UInt8(ascii: ".")]) }
        var baseParts: [ArraySlice<UInt8>] = []
        var rest: [Segment] = []
        for part in parts {
            let bytes = Array(part)
            if rest.isEmpty, !Glob.hasWildcard(bytes) {
                baseParts.append(part)
                continue
            }
            if bytes.elementsEqual("**".utf8) {
                if rest.last != .globstar { rest.append(.globstar) }
            } else if Glob.hasWildcard(bytes) {
                rest.append(.wildcard(bytes))
            } else {
                rest.append(.literal(Glob.unescaped(bytes)))
            }
        }
        var base = String(decoding: Array(baseParts.map { Glob.unescaped(Array($0)) }.joined(separator: [UInt8(ascii: "/")])), as: UTF8.self)
        if absolute { base = "/" + base }
        self.base = base
        self.segments = Array(rest.prefix(Glob.maxSegments))
    }

    /// Whether `pattern` is its own base: no wildcard character, no `.` or
    /// empty segment, no `/` at the end (unless it is `/`).
    static func isPlainPath(_ pattern: String) -> Bool {
        // Over the bytes in place: every check of every node builds its globs.
        var pattern = pattern
        return pattern.withUTF8 { isPlainPath(bytes: $0) }
    }

    private static func isPlainPath(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if index != bytes.count, bytes[index] == UInt8(ascii: "/") { index += 1 }
        guard index != bytes.count else { return true }
        var length = 0
        var isDot = false
        for byte in UnsafeBufferPointer(rebasing: bytes[index...]) {
            switch byte {
            case UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "\\"):
                return false
            case UInt8(ascii: "/"):
                if length == 0 || isDot { return false }
                length = 0
            default:
                isDot = length == 0 && byte == UInt8(ascii: ".")
                length += 1
            }
        }
        return length > 0 && !isDot
    }

    /// Whether the pattern has a wildcard (else it names one path).
    public var isLiteral: Bool { segments.isEmpty }

    /// Whether `bytes` has a wildcard that no `\` escapes (a segment of
    /// escaped characters only, `\[id\].tsx`, names one file).
    static func hasWildcard(_ bytes: [UInt8]) -> Bool {
        var escaped = false
        for byte in bytes {
            if escaped { escaped = false; continue }
            if byte == UInt8(ascii: "\\") { escaped = true; continue }
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "[") { return true }
        }
        return false
    }

    static func unescaped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "\\")) else { return bytes }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count { i += 1 }
            out.append(bytes[i])
            i += 1
        }
        return out
    }

    // MARK: - States of a walk

    /// A set of positions in `segments` (bit i: the next name must match segment i).
    public struct States: Sendable, Equatable {
        var bits: UInt64
        public var isEmpty: Bool { bits == 0 }
    }

    /// The states at `base`.
    public var start: States { closure(States(bits: 1)) }

    /// Whether `states` include the end of the pattern: the path so far matches.
    public func isMatch(_ states: States) -> Bool { states.bits & (1 << UInt64(segments.count)) != 0 }

    /// The states after one more path segment, `name`.
    public func advance(_ states: States, name: UnsafeBufferPointer<UInt8>) -> States {
        var next: UInt64 = 0
        let hidden = name.first == UInt8(ascii: ".")
        // Only a literal segment reaches a tool's directory.
        let tool = hidden && Glob.isToolName(name)
        var bits = states.bits
        while bits != 0 {
            let s = bits.trailingZeroBitCount
            bits &= bits - 1
            guard s < segments.count else { continue }
            switch segments[s] {
            case .globstar:
                if !hidden { next |= 1 << UInt64(s) }
            case .wildcard where tool:
                continue
            case .literal(let literal):
                if literal.count == name.count, literal.withUnsafeBufferPointer({ $0.elementsEqual(name) }) {
                    next |= 1 << UInt64(s + 1)
                }
            case .wildcard(let pattern):
                if hidden, pattern.first != UInt8(ascii: ".") { continue }
                if pattern.withUnsafeBufferPointer({ Glob.match($0, name) }) { next |= 1 << UInt64(s + 1) }
            }
        }
        return closure(States(bits: next))
    }

    /// Adds, for each `**` in the set, the position after it (it may match no directory).
    private func closure(_ states: States) -> States {
        var bits = states.bits
        for (i, segment) in segments.enumerated() where segment == .globstar && bits & (1 << UInt64(i)) != 0 {
            bits |= 1 << UInt64(i + 1)
        }
        return States(bits: bits)
    }

    /// Whether the pattern means the file at `path` (relative to `base`,
    /// `/`-separated; "" is the base itself): the pattern matches it, or a
    /// directory above it (the base included) with no tool's directory
    /// between them. See the rule above.
    public func means(relativePath path: String) -> Bool {
        var path = path
        return path.withUTF8 { means(relativeBytes: $0) }
    }

    /// `means(relativePath:)` for a path given as bytes (a name that is not
    /// UTF-8 too); walks the bytes in place, without allocating.
    func means(relativeBytes path: UnsafeBufferPointer<UInt8>) -> Bool {
        var states = start
        var below = isMatch(states)
        var i = 0
        while i < path.count {
            var end = i
            while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
            if end > i {
                let name = UnsafeBufferPointer(rebasing: path[i..<end])
                if below {
                    if Glob.isToolName(name) { return false }
                } else {
                    states = advance(states, name: name)
                    if states.isEmpty { return false }
                    below = isMatch(states)
                }
            }
            i = end + 1
        }
        return below
    }

    /// Whether the pattern itself names a directory's whole tree when its
    /// base is one: a plain path, or a base followed by `**` alone.
    public var takesBaseWhole: Bool { isMatch(start) }

    /// The names that belong to tools, not to the project: version control's
    /// directories, moon's state directory and its temporary files beside
    /// outputs (`.moon-restore-…`). Neither a wildcard nor a directory taken
    /// whole reaches them; a pattern that spells the name does.
    public static let toolNames: [String] = [".git", ".hg", ".svn", ".bzr", ".jj", ".moon"]

    public static func isToolName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count >= 3, name[0] == UInt8(ascii: ".") else { return false }
        for tool in toolNameBytes where tool.count == name.count && tool.elementsEqual(name) { return true }
        // moon's temporary files and directories (`.moon-restore-…`).
        return name.count > 6 && name.starts(with: ".moon-".utf8)
    }

    public static func isToolName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isToolName($0) }
    }

    private static let toolNameBytes: [[UInt8]] = toolNames.map { Array($0.utf8) }

    /// fnmatch-like matching of one segment: `*`, `?`, `[...]`, `\x`.
    static func match(_ p: UnsafeBufferPointer<UInt8>, _ s: UnsafeBufferPointer<UInt8>) -> Bool {
        var pi = 0, si = 0
        var starP = -1, starS = 0
        while si < s.count {
            if pi < p.count {
                let c = p[pi]
                if c == UInt8(ascii: "*") {
                    starP = pi; starS = si; pi += 1
                    continue
                }
                if c == UInt8(ascii: "?") {
                    pi += 1; si += 1
                    continue
                }
                if c == UInt8(ascii: "["), let (matched, end) = matchClass(p, pi, s[si]) {
                    if matched { pi = end; si += 1; continue }
                } else {
                    var literal = c
                    var width = 1
                    if c == UInt8(ascii: "\\"), pi + 1 < p.count { literal = p[pi + 1]; width = 2 }
                    if literal == s[si] { pi += width; si += 1; continue }
                }
            }
            guard starP >= 0 else { return false }
            pi = starP + 1
            starS += 1
            si = starS
        }
        while pi < p.count, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }

    /// A `[...]` class at `start`: whether `byte` is in it, and the index after `]`;
    /// nil when the class is not closed (then `[` is an ordinary character).
    static func matchClass(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ byte: UInt8) -> (Bool, Int)? {
        var i = start + 1
        var negate = false
        if i < p.count, p[i] == UInt8(ascii: "!") || p[i] == UInt8(ascii: "^") { negate = true; i += 1 }
        var matched = false
        var first = true
        while i < p.count {
            var c = p[i]
            if c == UInt8(ascii: "]"), !first { return (matched != negate, i + 1) }
            first = false
            if c == UInt8(ascii: "\\"), i + 1 < p.count { i += 1; c = p[i] }
            if i + 2 < p.count, p[i + 1] == UInt8(ascii: "-"), p[i + 2] != UInt8(ascii: "]") {
                var hi = p[i + 2]
                var skip = 3
                if hi == UInt8(ascii: "\\"), i + 3 < p.count { hi = p[i + 3]; skip = 4 }
                if c <= byte && byte <= hi { matched = true }
                i += skip
            } else {
                if c == byte { matched = true }
                i += 1
            }
        }
        return nil
    }
}
