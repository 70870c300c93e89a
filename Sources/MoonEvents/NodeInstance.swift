/// What makes a node one instance of a fan-out (`for-each` over a list, a
/// glob or a need's output, or a `matrix` combination): the node it was
/// made from and its item. Its name is `TEMPLATE[ITEM]` (`obj[src/a.c]`,
/// `test[unit,O2]`); node names never contain `[`, so the name alone says
/// which template it belongs to.
public struct NodeInstance: Sendable, Equatable {
    /// The name of the node the instance was made from.
    public var template: String
    /// The item as the instance's name shows it.
    public var item: String
    /// A matrix instance's values, in the matrix's key order (empty for a `for-each` item).
    public var matrix: [KeyValue]

    public init(template: String, item: String, matrix: [KeyValue] = []) {
        self.template = template
        self.item = item
        self.matrix = matrix
    }

    /// The instance's node name: `TEMPLATE[ITEM]`.
    public var name: String { Self.name(template: template, item: item) }

    public static func name(template: String, item: String) -> String {
        template + "[" + item + "]"
    }

    /// The template of an instance's name (what comes before its first
    /// `[`); nil for the name of a node that is no instance.
    public static func template(ofName name: String) -> Substring? {
        guard name.utf8.last == UInt8(ascii: "]"), let open = name.firstIndex(of: "[") else { return nil }
        return name[..<open]
    }
}
