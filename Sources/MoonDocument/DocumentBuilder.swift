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
    private(set) var root: YAMLNode?

    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        var start: SourceLocation
        /// A sequence's items.
        var items: [YAMLNode] = []
        /// A mapping's pairs so far, and the key waiting for its value.
        var pairs: [YAMLNode.Pair] = []
        var pendingKey: YAMLNode?
        /// A large mapping's keys, each with its first occurrence. Small
        /// mappings (most of them) are searched linearly instead, which is
        /// cheaper than building a dictionary for three keys.
        var firstKey: [KeyIdentity: YAMLNode]?
        var hasMerge = false
    }

    /// Mappings up to this many keys check duplicates by a linear search.
    private static let linearKeyLimit = 16

    private var stack: [Frame] = []
    /// Anchored nodes by name; a later anchor with the same name replaces the earlier one.
    private var anchors: [String: YAMLNode] = [:]
    /// Nodes written so far, and nodes repeated by aliases so far (each
    /// alias at the size of the node it names).
    private var writtenCount = 0
    private var aliasCount = 0

    init(path: String, limits: YAMLLoader.Limits) {
        self.path = path
        self.limits = limits
    }

    // MARK: Events

    mutating func scalar(_ text: String, style: YAMLNode.ScalarStyle, tag: String?, anchor: String?,
                         start: SourceLocation, end: SourceLocation) -> Bool {
        let node = YAMLNode(kind: .scalar(text, style: style, tag: tag), span: span(start, end))
        guard countWritten(at: node.span) else { return false }
        if let anchor { anchors[anchor] = node }
        attach(node)
        return true
    }

    mutating func alias(_ name: String, start: SourceLocation, end: SourceLocation) -> Bool {
        let here = span(start, end)
        guard let node = anchors[name] else {
            if stack.contains(where: { $0.anchor == name }) {
                diagnostics.append(.error("alias '*\(Self.quote(name))' refers to a node that contains it; a YAML alias cannot be recursive", at: here))
            } else {
                diagnostics.append(.error("unknown alias '*\(Self.quote(name))'; no anchor '&\(Self.quote(name))' is defined before it", at: here))
            }
            // The tree is wrong from here on, but reading on still finds other errors.
            attach(YAMLNode(kind: .scalar("", style: .plain, tag: nil), span: here))
            return true
        }
        // An alias shares the anchored node; its size counts, which is what
        // stops an alias bomb before anything is copied or walked.
        guard countAlias(node.nodeCount, at: here) else { return false }
        attach(node)
        return true
    }

    mutating func startCollection(mapping: Bool, anchor: String?, start: SourceLocation, end: SourceLocation) -> Bool {
        guard stack.count < limits.maxDepth else {
            diagnostics.append(.error("the document is nested more than \(limits.maxDepth) levels deep", at: span(start, end),
                                      notes: ["help: a graph needs a few levels at most; look for '[' or '{' opened by mistake"]))
            return false
        }
        guard countWritten(at: span(start, end)) else { return false }
        stack.append(Frame(isMapping: mapping, anchor: anchor, start: start))
        return true
    }

    mutating func endCollection(end: SourceLocation) -> Bool {
        guard let frame = stack.popLast() else { return true }
        let whole = span(frame.start, end)
        let node: YAMLNode
        if frame.isMapping {
            // libyaml always gives a key its value; a lone key could only follow an error.
            node = YAMLNode(kind: .mapping(frame.hasMerge ? merge(frame.pairs) : frame.pairs), span: whole)
        } else {
            node = YAMLNode(kind: .sequence(frame.items), span: whole)
        }
        if let anchor = frame.anchor { anchors[anchor] = node }
        attach(node)
        return true
    }

    // MARK: Mappings

    /// Records a mapping key; returns the error if the mapping already has it.
    /// Checked as each key arrives, so duplicates are reported even when a
    /// syntax error later stops the mapping from ever ending.
    private static func addKey(_ key: YAMLNode, to frame: inout Frame) -> Diagnostic? {
        let isMerge = isMergeKey(key)
        frame.hasMerge = frame.hasMerge || isMerge
        frame.pendingKey = key
        var first: YAMLNode?
        if frame.firstKey == nil, frame.pairs.count < linearKeyLimit {
            first = frame.pairs.first { sameKey($0.key, key) }?.key
        } else {
            var table = frame.firstKey ?? [:]
            frame.firstKey = nil  // keep the dictionary uniquely referenced while it changes
            if table.isEmpty {
                table.reserveCapacity(frame.pairs.count * 2)
                for pair in frame.pairs where table[KeyIdentity(pair.key)] == nil {
                    table[KeyIdentity(pair.key)] = pair.key
                }
            }
            let identity = KeyIdentity(key)
            first = table[identity]
            if first == nil { table[identity] = key }
            frame.firstKey = table
        }
        guard let first else { return nil }
        let name = isMerge ? "merge key '<<'" : "key \(describeKey(key))"
        return .error(
            "duplicate \(name) in this mapping", at: key.span,
            notes: ["note: first defined at line \(first.span.start.line), column \(first.span.start.column)",
                    "help: keys of one mapping must differ (YAML readers disagree on which one wins): remove or rename one"])
    }

    /// Whether two keys are the same key; the common case (two scalars) needs no hashing.
    private static func sameKey(_ a: YAMLNode, _ b: YAMLNode) -> Bool {
        switch (a.kind, b.kind) {
        case (.scalar(let x, _, _), .scalar(let y, _, _)): return x == y
        case (.scalar, _), (_, .scalar): return false
        default: return KeyIdentity(a) == KeyIdentity(b)
        }
    }

    /// Applies merge keys (`<<`), Docker Compose style: keys written in the
    /// mapping win over merged ones, and an earlier merged mapping wins over
    /// a later one. Merged pairs take the place of their `<<` entry, so file
    /// order still reads naturally.
    private mutating func merge(_ pairs: [YAMLNode.Pair]) -> [YAMLNode.Pair] {
        var taken = Set<KeyIdentity>()
        for pair in pairs where !Self.isMergeKey(pair.key) { taken.insert(KeyIdentity(pair.key)) }
        var result: [YAMLNode.Pair] = []
        result.reserveCapacity(pairs.count)
        for pair in pairs {
            guard Self.isMergeKey(pair.key) else {
                result.append(pair)
                continue
            }
            let sources: [YAMLNode]
            switch pair.value.kind {
            case .mapping:
                sources = [pair.value]
            case .sequence(let items):
                sources = items
            case .scalar:
                diagnostics.append(.error(
                    "the value of a merge key '<<' must be a mapping or a list of mappings, not \(pair.value.kindDescription)",
                    at: pair.value.span))
                continue
            }
            for source in sources {
                guard let merged = source.pairs else {
                    diagnostics.append(.error(
                        "a merge key '<<' can only merge mappings, not \(source.kindDescription)", at: source.span))
                    continue
                }
                for mergedPair in merged where taken.insert(KeyIdentity(mergedPair.key)).inserted {
                    result.append(mergedPair)
                }
            }
        }
        return result
    }

    /// A plain, untagged `<<` (or one tagged `!!merge`) is a merge key; a quoted "<<" is an ordinary key.
    static func isMergeKey(_ node: YAMLNode) -> Bool {
        switch node.kind {
        case .scalar("<<", .plain, nil), .scalar(_, _, "tag:yaml.org,2002:merge"): return true
        default: return false
        }
    }

    /// A key as a user would recognise it in a message.
    static func describeKey(_ node: YAMLNode) -> String {
        guard let text = node.scalar else { return node.kindDescription }
        return "'\(quote(text))'"
    }

    /// Shortens text from the file for a message; the renderer strips control characters.
    static func quote(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(57)) + "..." : text
    }

    // MARK: Helpers

    private func span(_ start: SourceLocation, _ end: SourceLocation) -> SourceSpan {
        SourceSpan(file: path, start: start, end: end)
    }

    private mutating func attach(_ node: YAMLNode) {
        if stack.isEmpty {
            root = node
        } else {
            let top = stack.count - 1
            if !stack[top].isMapping {
                stack[top].items.append(node)
            } else if let key = stack[top].pendingKey {
                stack[top].pairs.append(YAMLNode.Pair(key: key, value: node))
                stack[top].pendingKey = nil
            } else if let duplicate = Self.addKey(node, to: &stack[top]) {
                diagnostics.append(duplicate)
            }
        }
    }

    /// Counts one written node; false (with a diagnostic) once over the limit.
    private mutating func countWritten(at span: SourceSpan) -> Bool {
        writtenCount += 1
        guard writtenCount > limits.maxNodes else { return true }
        diagnostics.append(.error(
            "the document has more than \(limits.maxNodes) nodes (keys, values and list items)",
            at: span,
            notes: ["note: this is where the limit was reached; it bounds the memory a graph file can take to load",
                    "help: split the graph into several files"]))
        return false
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
    case object(ObjectIdentifier)

    init(_ node: YAMLNode) {
        switch node.kind {
        case .scalar(let value, _, _):
            self = .scalar(value)
        case .sequence, .mapping:
            if node.nodeCount <= 64 {
                var out = ""
                KeyIdentity.canonical(node, into: &out)
                self = .structure(out)
            } else {
                self = .object(ObjectIdentifier(node))
            }
        }
    }

    /// Recursion is bounded: a node of at most 64 nodes is at most 64 deep.
    private static func canonical(_ node: YAMLNode, into out: inout String) {
        switch node.kind {
        case .scalar(let value, _, _):
            out += value.debugDescription
        case .sequence(let items):
            out += "["
            for item in items { canonical(item, into: &out); out += "," }
            out += "]"
        case .mapping(let pairs):
            out += "{"
            for pair in pairs { canonical(pair.key, into: &out); out += ":"; canonical(pair.value, into: &out); out += "," }
            out += "}"
        }
    }
}
