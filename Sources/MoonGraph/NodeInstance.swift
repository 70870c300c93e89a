/// What makes a node one instance of a `for-each` or `matrix` template: the
/// template's name, the label in its brackets, and the values its
/// expressions read. The node's name is `template[label]`.
public struct NodeInstance: Sendable, Hashable, Codable {
    /// The template's name (`obj`, `lib:test`).
    public var template: String
    /// What goes in the brackets: the item (`src/lapi.c`), or the matrix
    /// values in key order joined by commas (`unit,O2`).
    public var label: String
    /// The item of a `for-each` (`${{ item }}`); nil for a matrix.
    public var item: String?
    /// The matrix values (`${{ matrix.KEY }}`), in the order the keys are written; empty for a `for-each`.
    public var matrix: Variables

    public init(template: String, label: String, item: String? = nil, matrix: Variables = Variables()) {
        self.template = template
        self.label = label
        self.item = item
        self.matrix = matrix
    }

    /// `template[label]`.
    public var name: String { Self.name(template: template, label: label) }

    public static func name(template: String, label: String) -> String { template + "[" + label + "]" }

    /// The values as `(name, value)` pairs (`item`, or `matrix.KEY`), for fingerprints and events.
    public var values: [(name: String, value: String)] {
        if let item { return [("item", item)] }
        return matrix.map { ("matrix." + $0.name, $0.value) }
    }
}

/// A `for-each: ${{ needs.X.outputs.KEY }}`: the template stays one node of
/// the graph, whose expressions read `item`; it is expanded at run time,
/// when the need completes, into one instance per item of the JSON list.
public struct DynamicFanOut: Sendable, Hashable, Codable {
    /// The need's index in `Graph.nodes` (always one of the node's `needs`).
    public var need: Int
    /// The output key that holds the JSON list of strings.
    public var key: String

    public init(need: Int, key: String) {
        self.need = need
        self.key = key
    }
}
