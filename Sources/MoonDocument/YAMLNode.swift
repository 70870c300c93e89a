/// A node of a loaded YAML document. Aliases are already expanded (an alias
/// refers to the anchored node, with the anchor's span) and merge keys (`<<`)
/// already applied, so later stages see plain trees.
public final class YAMLNode: @unchecked Sendable {
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
        case sequence([YAMLNode])
        case mapping([Pair])
    }

    public let kind: Kind
    public let span: SourceSpan
    /// How many nodes this tree holds when every alias is expanded (this node
    /// included). Aliases share one node object, so a tree can be small in
    /// memory and huge to walk; the loader bounds this number, and it is kept
    /// here so each anchored node's size is computed once. Saturates at `Int.max`.
    public let nodeCount: Int

    public init(kind: Kind, span: SourceSpan) {
        self.kind = kind
        self.span = span
        var count = 1
        switch kind {
        case .scalar:
            break
        case .sequence(let items):
            for item in items { count = YAMLNode.saturatingAdd(count, item.nodeCount) }
        case .mapping(let pairs):
            for pair in pairs {
                count = YAMLNode.saturatingAdd(count, pair.key.nodeCount)
                count = YAMLNode.saturatingAdd(count, pair.value.nodeCount)
            }
        }
        self.nodeCount = count
    }

    static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// The text of a scalar, or nil for a collection.
    public var scalar: String? {
        if case .scalar(let text, _, _) = kind { return text }
        return nil
    }

    /// A mapping's pairs, or nil.
    public var pairs: [Pair]? {
        if case .mapping(let pairs) = kind { return pairs }
        return nil
    }

    /// A sequence's items, or nil.
    public var items: [YAMLNode]? {
        if case .sequence(let items) = kind { return items }
        return nil
    }

    /// True for a plain scalar that YAML reads as null (`~`, `null`, empty).
    public var isNull: Bool {
        if case .scalar(let text, .plain, nil) = kind {
            return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
        }
        if case .scalar(_, _, "tag:yaml.org,2002:null") = kind { return true }
        return false
    }

    /// A word for error messages: "a mapping", "a list", "a string".
    public var kindDescription: String {
        switch kind {
        case .scalar: return isNull ? "null" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }
}
