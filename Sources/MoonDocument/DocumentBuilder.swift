#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds one `YAMLNode` tree from parser events: keeps the stack of open
/// collections, expands aliases, applies merge keys, finds duplicate keys and
/// enforces `YAMLLoader.Limits`.
///
/// It knows nothing of libyaml (the loader feeds it plain values), so the
/// rules about documents live in one place and can be reasoned about apart
/// from the C API. The stack is explicit rather than recursive so that no
/// input depth can overflow the call stack; each event method returns
/// `false` when the document must stop being read (a limit was hit), because
/// reading on after an alias bomb or a 200,000-deep nest is exactly the work
/// the limits exist to avoid.
struct DocumentBuilder {
    let path: String
    let limits: YAMLLoader.Limits
    /// Problems found so far, in the order found.
    private(set) var diagnostics: [Diagnostic] = []
    /// The finished root node, once the outermost node has ended.
    private(set) var root: UInt32?
    private var tree: YAMLTree.Writer

    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        var start: SourceLocation
        /// Where this collection's children start in `pending` (a mapping's
        /// keys and values in turn).
        var base: Int
        /// A mapping's last key is still waiting for its value.
        var awaitsValue = false
        /// A large mapping's keys, each with its first occurrence. Small
        /// mappings (most of them) are searched linearly instead, which is
        /// cheaper than building a dictionary for three keys.
        var firstKey: [KeyIdentity: UInt32]?
        var hasMerge = false
    }

    /// Mappings up to this many keys check duplicates by a linear search.
    private static let linearKeyLimit = 16

    private var stack: [Frame] = []
    /// The children of every open collection, innermost last: one array for
    /// the whole document rather than one per collection.
    private var pending: [UInt32] = []
    /// Anchored nodes by name; a later anchor with the same name replaces the earlier one.
    private var anchors: [String: UInt32] = [:]
    /// Nodes written so far, and nodes repeated by aliases so far (each
    /// alias at the size of the node it names).
    private var writtenCount = 0
    private var aliasCount = 0

    init(path: String, limits: YAMLLoader.Limits) {
        self.path = path
        self.limits = limits
        self.tree = YAMLTree.Writer(file: path)
    }

    /// Sizes the tables for a document of `bytes` bytes (a graph file has
    /// about one node per six bytes), so that they seldom grow and copy.
    mutating func expect(bytes: Int) {
        tree.reserve(nodes: min(bytes / 6, limits.maxNodes, 1 << 20))
    }

    /// The document, once its outermost node has ended.
    func document() -> YAMLNode? {
        root.map { YAMLNode(tree.finish(), $0) }
    }

    // MARK: Events

    mutating func scalar(_ text: String, style: YAMLNode.ScalarStyle, tag: String?, anchor: String?,
                         start: SourceLocation, end: SourceLocation) -> Bool {
        guard countWritten(at: start, end) else { return false }
        // Every scalar is searched: at memory speed on its contiguous bytes.
        let hasNUL = text.utf8.withContiguousStorageIfAvailable { $0.isEmpty ? false : memchr($0.baseAddress!, 0, $0.count) != nil } ?? text.utf8.contains(0)
        if hasNUL { refuseNUL(at: span(start, end)) }
        let node = tree.scalar(text, style: style, tag: tag, start: start, end: end)
        if let anchor { anchors[anchor] = node }
        attach(node)
        return true
    }

    mutating func alias(_ name: String, start: SourceLocation, end: SourceLocation) -> Bool {
        guard let node = anchors[name] else {
            let here = span(start, end)
            if stack.contains(where: { $0.anchor == name }) {
                diagnostics.append(.error("alias '*\(Self.quote(name))' refers to a node that contains it; a YAML alias cannot be recursive", at: here))
            } else {
                diagnostics.append(.error("unknown alias '*\(Self.quote(name))'; no anchor '&\(Self.quote(name))' is defined before it", at: here))
            }
            // The tree is wrong from here on, but reading on still finds other errors.
            attach(tree.scalar("", style: .plain, tag: nil, start: start, end: end))
            return true
        }
        // An alias shares the anchored node; its size counts, which is what
        // stops an alias bomb before anything is copied or walked.
        guard countAlias(tree.entry(node).nodeCount, at: span(start, end)) else { return false }
        attach(tree.alias(of: node, start: start, end: end))
        return true
    }

    mutating func startCollection(mapping: Bool, anchor: String?, start: SourceLocation, end: SourceLocation) -> Bool {
        guard stack.count < limits.maxDepth else {
            diagnostics.append(.error("the document is nested more than \(limits.maxDepth) levels deep", at: span(start, end),
                                      notes: ["help: a graph needs a few levels at most; look for '[' or '{' opened by mistake"]))
            return false
        }
        guard countWritten(at: start, end) else { return false }
        stack.append(Frame(isMapping: mapping, anchor: anchor, start: start, base: pending.count))
        return true
    }

    mutating func endCollection(end: SourceLocation) -> Bool {
        guard let frame = stack.popLast() else { return true }
        // libyaml always gives a key its value; a lone key could only follow an error.
        let count = frame.isMapping ? (pending.count - frame.base) & ~1 : pending.count - frame.base
        let node = collection(frame, children: frame.base..<frame.base + count, end: end)
        // Only now: a slice of `pending` still alive would make this a copy.
        pending.removeLast(pending.count - frame.base)
        if let anchor = frame.anchor { anchors[anchor] = node }
        attach(node)
        return true
    }

    /// The collection `frame` opened, of the children at `range` in `pending`.
    private mutating func collection(_ frame: Frame, children range: Range<Int>, end: SourceLocation) -> UInt32 {
        if frame.isMapping && frame.hasMerge {
            let merged = merge(pending[range])
            return tree.collection(mapping: true, merged, start: frame.start, end: end)
        }
        return tree.collection(mapping: frame.isMapping, pending[range], start: frame.start, end: end)
    }

    // MARK: Mappings

    /// Records a mapping key; returns the error if the mapping already has it.
    /// Checked as each key arrives, so duplicates are reported even when a
    /// syntax error later stops the mapping from ever ending.
    private mutating func addKey(_ key: UInt32, to top: Int) -> Diagnostic? {
        let isMerge = Self.isMergeKey(key, in: tree)
        stack[top].hasMerge = stack[top].hasMerge || isMerge
        let base = stack[top].base
        var first: UInt32?
        if stack[top].firstKey == nil, pending.count - base < 2 * Self.linearKeyLimit {
            var at = base
            while at < pending.count {
                if sameKey(pending[at], key) { first = pending[at]; break }
                at += 2
            }
        } else {
            var table = stack[top].firstKey ?? [:]
            stack[top].firstKey = nil  // keep the dictionary uniquely referenced while it changes
            if table.isEmpty {
                table.reserveCapacity(pending.count - base)
                for at in stride(from: base, to: pending.count, by: 2) {
                    let identity = KeyIdentity(pending[at], in: tree)
                    if table[identity] == nil { table[identity] = pending[at] }
                }
            }
            let identity = KeyIdentity(key, in: tree)
            first = table[identity]
            if first == nil { table[identity] = key }
            stack[top].firstKey = table
        }
        pending.append(key)
        stack[top].awaitsValue = true
        guard let first else { return nil }
        let name = isMerge ? "merge key '<<'" : "key \(describeKey(key))"
        let firstStart = tree.entry(first).start
        return .error(
            "duplicate \(name) in this mapping", at: span(of: key),
            notes: ["note: first defined at line \(firstStart.line), column \(firstStart.column)",
                    "help: keys of one mapping must differ (YAML readers disagree on which one wins): remove or rename one"])
    }

    /// Whether two keys are the same key; the common case (two scalars) needs no hashing.
    private func sameKey(_ a: UInt32, _ b: UInt32) -> Bool {
        let x = tree.entry(a), y = tree.entry(b)
        switch (x.shape, y.shape) {
        case (.scalar, .scalar): return tree.text(a) == tree.text(b)
        case (.scalar, _), (_, .scalar): return false
        default: return KeyIdentity(a, in: tree) == KeyIdentity(b, in: tree)
        }
    }

    /// Applies merge keys (`<<`), Docker Compose style: keys written in the
    /// mapping win over merged ones, and an earlier merged mapping wins over
    /// a later one. Merged pairs take the place of their `<<` entry, so file
    /// order still reads naturally. `pairs` holds keys and values in turn.
    private mutating func merge(_ pairs: ArraySlice<UInt32>) -> [UInt32] {
        var taken = Set<KeyIdentity>()
        for at in stride(from: pairs.startIndex, to: pairs.endIndex, by: 2) where !Self.isMergeKey(pairs[at], in: tree) {
            taken.insert(KeyIdentity(pairs[at], in: tree))
        }
        var result: [UInt32] = []
        result.reserveCapacity(pairs.count)
        for at in stride(from: pairs.startIndex, to: pairs.endIndex, by: 2) {
            let key = pairs[at], value = pairs[at + 1]
            guard Self.isMergeKey(key, in: tree) else {
                result.append(key)
                result.append(value)
                continue
            }
            let sources: [UInt32]
            switch tree.entry(value).shape {
            case .mapping:
                sources = [value]
            case .sequence:
                sources = Array(tree.children(of: value))
            case .scalar:
                diagnostics.append(.error(
                    "the value of a merge key '<<' must be a mapping or a list of mappings, not \(kindDescription(value))",
                    at: span(of: value)))
                continue
            }
            for source in sources {
                guard tree.entry(source).shape == .mapping else {
                    diagnostics.append(.error(
                        "a merge key '<<' can only merge mappings, not \(kindDescription(source))", at: span(of: source)))
                    continue
                }
                let merged = tree.children(of: source)
                for at in stride(from: merged.startIndex, to: merged.endIndex, by: 2)
                where taken.insert(KeyIdentity(merged[at], in: tree)).inserted {
                    result.append(merged[at])
                    result.append(merged[at + 1])
                }
            }
        }
        return result
    }

    /// A plain, untagged `<<` (or one tagged `!!merge`) is a merge key; a quoted "<<" is an ordinary key.
    static func isMergeKey(_ node: UInt32, in tree: YAMLTree.Writer) -> Bool {
        let entry = tree.entry(node)
        guard entry.shape == .scalar else { return false }
        if entry.tagged { return tree.tags[node] == "tag:yaml.org,2002:merge" }
        return entry.style == .plain && tree.text(node) == "<<"
    }

    /// A key as a user would recognise it in a message.
    private func describeKey(_ node: UInt32) -> String {
        guard tree.entry(node).shape == .scalar else { return kindDescription(node) }
        return "'\(Self.quote(tree.text(node)))'"
    }

    private func kindDescription(_ node: UInt32) -> String {
        let entry = tree.entry(node)
        switch entry.shape {
        case .scalar: return entry.isNull ? "null" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// Shortens text from the file for a message; the renderer strips control characters.
    static func quote(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(57)) + "..." : text
    }

    // MARK: Helpers

    private func span(_ start: SourceLocation, _ end: SourceLocation) -> SourceSpan {
        SourceSpan(file: path, start: start, end: end)
    }

    private func span(of node: UInt32) -> SourceSpan {
        let entry = tree.entry(node)
        return span(entry.start, entry.end)
    }

    private mutating func attach(_ node: UInt32) {
        guard !stack.isEmpty else {
            root = node
            return
        }
        let top = stack.count - 1
        if !stack[top].isMapping {
            pending.append(node)
        } else if stack[top].awaitsValue {
            pending.append(node)
            stack[top].awaitsValue = false
        } else if let duplicate = addKey(node, to: top) {
            diagnostics.append(duplicate)
        }
    }

    /// Counts one written node; false (with a diagnostic) once over the limit.
    private mutating func countWritten(at start: SourceLocation, _ end: SourceLocation) -> Bool {
        writtenCount += 1
        guard writtenCount > limits.maxNodes else { return true }
        diagnostics.append(.error(
            "the document has more than \(limits.maxNodes) nodes (keys, values and list items)",
            at: span(start, end),
            notes: ["note: this is where the limit was reached; it bounds the memory a graph file can take to load",
                    "help: split the graph into several files"]))
        return false
    }

    /// A NUL written as an escape (`\\0`, `\\x00`, `\\u0000`): every string of a
    /// graph file may reach the system (a command, an argument, a path, the
    /// environment), which ends a string at NUL and would silently run or
    /// touch something shorter than what is written. Refused in every
    /// scalar, so that no later stage has to remember it.
    private mutating func refuseNUL(at span: SourceSpan) {
        diagnostics.append(.error(
            "a NUL character cannot be passed to a command, a path or the environment; the system would cut the text at it",
            at: span,
            notes: ["help: remove the '\\0' (or '\\x00', '\\u0000') escape from this string; a command that must write a NUL byte can print it, e.g. printf '\\0'"]))
    }

    /// Adds the `nodes` an alias repeats; false (with a diagnostic) once over the limit.
    private mutating func countAlias(_ nodes: Int, at span: SourceSpan) -> Bool {
        aliasCount = YAMLNode.saturatingAdd(aliasCount, nodes)
        guard aliasCount > limits.maxAliasNodes else { return true }
        diagnostics.append(.error(
            "the aliases of this document repeat more than \(limits.maxAliasNodes) nodes",
            at: span,
            notes: ["note: this is where the limit was reached; a file whose aliases refer to aliases (a \"billion laughs\" file) grows this way"]))
        return false
    }
}

/// What makes two mapping keys the same key, for duplicate detection and
/// merges. Scalars compare by their text whatever their quoting, because every
/// later stage reads keys as strings (`1` and `"1"` would name the same node).
/// Collection keys compare by structure when small; a large one (possibly an
/// expanded alias bomb) compares by identity so that hashing stays cheap.
enum KeyIdentity: Hashable {
    case scalar(String)
    case structure(String)
    case node(UInt32)

    init(_ node: UInt32, in tree: YAMLTree.Writer) {
        let entry = tree.entry(node)
        if entry.shape == .scalar {
            self = .scalar(tree.text(node))
        } else if entry.nodeCount <= 64 {
            var out = ""
            KeyIdentity.canonical(node, in: tree, into: &out)
            self = .structure(out)
        } else {
            self = .node(tree.origin(node))
        }
    }

    /// Recursion is bounded: a node of at most 64 nodes is at most 64 deep.
    private static func canonical(_ node: UInt32, in tree: YAMLTree.Writer, into out: inout String) {
        switch tree.entry(node).shape {
        case .scalar:
            out += tree.text(node).debugDescription
        case .sequence:
            out += "["
            for item in tree.children(of: node) { canonical(item, in: tree, into: &out); out += "," }
            out += "]"
        case .mapping:
            out += "{"
            let children = tree.children(of: node)
            for at in stride(from: children.startIndex, to: children.endIndex, by: 2) {
                canonical(children[at], in: tree, into: &out)
                out += ":"
                canonical(children[at + 1], in: tree, into: &out)
                out += ","
            }
            out += "}"
        }
    }
}
