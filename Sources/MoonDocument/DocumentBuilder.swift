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
        /// Items of a sequence, or keys and values alternating for a mapping.
        var children: [YAMLNode] = []
    }

    private var stack: [Frame] = []
    /// Anchored nodes by name; a later anchor with the same name replaces the earlier one.
    private var anchors: [String: YAMLNode] = [:]
    /// Nodes so far with every alias counted at its expanded size.
    private var expandedCount = 0

    init(path: String, limits: YAMLLoader.Limits) {
        self.path = path
        self.limits = limits
    }

    // MARK: Events

    mutating func scalar(_ text: String, style: YAMLNode.ScalarStyle, tag: String?, anchor: String?,
                         start: SourceLocation, end: SourceLocation) -> Bool {
        let node = YAMLNode(kind: .scalar(text, style: style, tag: tag), span: span(start, end))
        guard count(1, at: node.span) else { return false }
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
        // An alias shares the anchored node; its size counts again, which is
        // what stops an alias bomb before anything is copied or walked.
        guard count(node.nodeCount, at: here) else { return false }
        attach(node)
        return true
    }

    mutating func startCollection(mapping: Bool, anchor: String?, start: SourceLocation, end: SourceLocation) -> Bool {
        guard stack.count < limits.maxDepth else {
            diagnostics.append(.error("the document is nested more than \(limits.maxDepth) levels deep", at: span(start, end)))
            return false
        }
        guard count(1, at: span(start, end)) else { return false }
        stack.append(Frame(isMapping: mapping, anchor: anchor, start: start))
        return true
    }

    mutating func endCollection(end: SourceLocation) -> Bool {
        guard let frame = stack.popLast() else { return true }
        let whole = span(frame.start, end)
        let node: YAMLNode
        if frame.isMapping {
            var pairs: [YAMLNode.Pair] = []
            pairs.reserveCapacity(frame.children.count / 2)
            var i = 0
            while i + 1 < frame.children.count {
                pairs.append(YAMLNode.Pair(key: frame.children[i], value: frame.children[i + 1]))
                i += 2
            }
            node = YAMLNode(kind: .mapping(resolveMapping(pairs)), span: whole)
        } else {
            node = YAMLNode(kind: .sequence(frame.children), span: whole)
        }
        if let anchor = frame.anchor { anchors[anchor] = node }
        attach(node)
        return true
    }

    // MARK: Mappings

    /// Reports duplicate keys and applies merge keys (`<<`), Docker Compose
    /// style: keys written in the mapping win over merged ones, and an
    /// earlier merged mapping wins over a later one. Merged pairs take the
    /// place of their `<<` entry, so file order still reads naturally.
    private mutating func resolveMapping(_ pairs: [YAMLNode.Pair]) -> [YAMLNode.Pair] {
        var firstKey: [KeyIdentity: YAMLNode] = [:]
        firstKey.reserveCapacity(pairs.count)
        var hasMerge = false
        for pair in pairs {
            let isMerge = Self.isMergeKey(pair.key)
            hasMerge = hasMerge || isMerge
            let identity = KeyIdentity(pair.key)
            if let first = firstKey[identity] {
                let name = isMerge ? "merge key '<<'" : "key \(Self.describeKey(pair.key))"
                diagnostics.append(.error(
                    "duplicate \(name) in this mapping", at: pair.key.span,
                    notes: ["note: first defined at line \(first.span.start.line), column \(first.span.start.column)"]))
            } else {
                firstKey[identity] = pair.key
            }
        }
        guard hasMerge else { return pairs }

        var taken = Set(firstKey.keys)
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
            stack[stack.count - 1].children.append(node)
        }
    }

    /// Adds `nodes` to the expanded count; false (with a diagnostic) once over the limit.
    private mutating func count(_ nodes: Int, at span: SourceSpan) -> Bool {
        expandedCount = YAMLNode.saturatingAdd(expandedCount, nodes)
        guard expandedCount > limits.maxNodes else { return true }
        diagnostics.append(.error(
            "the document has more than \(limits.maxNodes) nodes once aliases are expanded",
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
struct KeyIdentity: Hashable {
    private let text: String

    init(_ node: YAMLNode) {
        switch node.kind {
        case .scalar(let value, _, _):
            text = "s" + value
        case .sequence, .mapping:
            if node.nodeCount <= 64 {
                var out = "c"
                KeyIdentity.canonical(node, into: &out)
                text = out
            } else {
                text = "o\(UInt(bitPattern: ObjectIdentifier(node)))"
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
