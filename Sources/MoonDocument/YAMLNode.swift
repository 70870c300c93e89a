/// A node of a loaded YAML document: a position in its `YAMLTree`. Aliases
/// are already expanded (an alias is the anchored node, with the alias's
/// own span, so that errors about it point where it is used) and merge keys (`<<`) already applied, so later stages see plain trees.
public struct YAMLNode: Sendable {
    /// How a scalar was written. Only plain scalars are resolved to
    /// null/bool/int/float by later stages; quoted and block scalars are strings.
    public enum ScalarStyle: Sendable, Hashable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    /// One key/value pair of a mapping, in file order.
    public struct Pair: Sendable {
        public let key: YAMLNode
        public let value: YAMLNode
        public init(key: YAMLNode, value: YAMLNode) {
            self.key = key
            self.value = value
        }
    }

    public enum Kind: Sendable {
        /// `tag` is the explicit tag if one was written (e.g. `!!str`), else nil.
        case scalar(String, style: ScalarStyle, tag: String?)
        case sequence(Items)
        case mapping(Pairs)
    }

    /// A sequence's items, in order.
    public struct Items: RandomAccessCollection, Sendable {
        let tree: YAMLTree
        let base: Int
        public let count: Int
        public var startIndex: Int { 0 }
        public var endIndex: Int { count }
        public subscript(position: Int) -> YAMLNode {
            precondition(position >= 0 && position < count, "index out of range")
            return YAMLNode(tree, tree.children[base + position])
        }
    }

    /// A mapping's pairs, in order.
    public struct Pairs: RandomAccessCollection, Sendable {
        let tree: YAMLTree
        let base: Int
        public let count: Int
        public var startIndex: Int { 0 }
        public var endIndex: Int { count }
        public subscript(position: Int) -> Pair {
            precondition(position >= 0 && position < count, "index out of range")
            let at = base + 2 * position
            return Pair(key: YAMLNode(tree, tree.children[at]), value: YAMLNode(tree, tree.children[at + 1]))
        }
    }

    let tree: YAMLTree
    let index: UInt32

    init(_ tree: YAMLTree, _ index: UInt32) {
        self.tree = tree
        self.index = index
    }

    private var entry: YAMLTree.Entry { tree.entries[Int(index)] }

    public var kind: Kind {
        let entry = self.entry
        switch entry.shape {
        case .scalar:
            return .scalar(tree.texts[Int(entry.first)], style: entry.style, tag: entry.tagged ? tree.tags[index] : nil)
        case .sequence:
            return .sequence(Items(tree: tree, base: Int(entry.first), count: Int(entry.count)))
        case .mapping:
            return .mapping(Pairs(tree: tree, base: Int(entry.first), count: Int(entry.count) / 2))
        }
    }

    public var span: SourceSpan {
        let entry = self.entry
        return SourceSpan(file: tree.file, start: entry.start, end: entry.end)
    }

    /// How many nodes this tree holds when every alias is expanded (this node
    /// included). Aliases share one node, so a tree can be small in memory
    /// and huge to walk; the loader bounds this number, and it is kept per
    /// node so each anchored node's size is computed once. Saturates at `Int.max`.
    public var nodeCount: Int { entry.nodeCount }

    static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// The text of a scalar, or nil for a collection.
    public var scalar: String? {
        let entry = self.entry
        return entry.shape == .scalar ? tree.texts[Int(entry.first)] : nil
    }

    /// A mapping's pairs, or nil.
    public var pairs: Pairs? {
        if case .mapping(let pairs) = kind { return pairs }
        return nil
    }

    /// A sequence's items, or nil.
    public var items: Items? {
        if case .sequence(let items) = kind { return items }
        return nil
    }

    /// True for a plain scalar that YAML reads as null (`~`, `null`, empty).
    public var isNull: Bool { entry.isNull }

    /// A word for error messages: "a mapping", "a list", "a string".
    public var kindDescription: String {
        switch entry.shape {
        case .scalar: return isNull ? "null" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// Whether `a` and `b` are the same node of the same document (an alias
    /// and its anchor are).
    public static func === (a: YAMLNode, b: YAMLNode) -> Bool {
        a.tree === b.tree && a.tree.origin(a.index) == b.tree.origin(b.index)
    }

    // MARK: Building documents in code

    /// A scalar as its own document.
    public static func scalar(_ text: String, style: ScalarStyle = .plain, tag: String? = nil, span: SourceSpan) -> YAMLNode {
        var writer = YAMLTree.Writer(file: span.file)
        let index = writer.scalar(text, style: style, tag: tag, start: span.start, end: span.end)
        return YAMLNode(writer.finish(), index)
    }

    /// A sequence of `items` as a new document (the items' documents are copied into it).
    public static func sequence(_ items: [YAMLNode], span: SourceSpan) -> YAMLNode {
        collection(mapping: false, items, span: span)
    }

    /// A mapping of `pairs` as a new document (the pairs' documents are copied into it).
    public static func mapping(_ pairs: [Pair], span: SourceSpan) -> YAMLNode {
        collection(mapping: true, pairs.flatMap { [$0.key, $0.value] }, span: span)
    }

    private static func collection(mapping: Bool, _ nodes: [YAMLNode], span: SourceSpan) -> YAMLNode {
        var writer = YAMLTree.Writer(file: span.file)
        var offsets: [ObjectIdentifier: UInt32] = [:]
        var children: [UInt32] = []
        children.reserveCapacity(nodes.count)
        for node in nodes {
            let id = ObjectIdentifier(node.tree)
            let offset: UInt32
            if let known = offsets[id] {
                offset = known
            } else {
                offset = writer.append(node.tree)
                offsets[id] = offset
            }
            children.append(offset + node.index)
        }
        let index = writer.collection(mapping: mapping, children, start: span.start, end: span.end)
        return YAMLNode(writer.finish(), index)
    }
}
