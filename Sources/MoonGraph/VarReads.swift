/// Which vars a node reads when it runs, so that its fingerprint and cache
/// key hold those and no other: a `--set` of a var reruns exactly the nodes
/// that read it.
///
/// A var reaches a node's process through `${{ vars.NAME }}` in its `run`,
/// `env`, `with` and `dir`, and through the graph's `env`, which every
/// process gets (unless the node's own `env` replaces that entry). Its
/// `sources`, `generates` and `depfile` have their vars put in at load, so
/// their text, which the fingerprint holds, has the values already; a var
/// that reads another holds that one's value once resolved (`VarResolver`),
/// so reading it is enough. `params` defaults are literal text.
public struct VarReads: Sendable {
    /// Per entry of the graph's `env:`: the vars its value reads.
    private let shared: [(name: String, vars: [String])]

    public init(graph: Graph) {
        shared = graph.env.compactMap { entry in
            let vars = Self.vars(in: entry.value)
            return vars.isEmpty ? nil : (entry.name, vars)
        }
    }

    /// The names of the vars `node` reads, sorted, without duplicates.
    public func names(readBy node: Node) -> [String] {
        var names: [String] = []
        switch node.action {
        case .group:
            return []
        case .shell(let script):
            names += Self.vars(in: script)
        case .exec(let arguments):
            for argument in arguments { names += Self.vars(in: argument) }
        case .builtin(_, let with):
            for argument in with.values { if case .template(let text) = argument { names += Self.vars(in: text) } }
        }
        if let dir = node.dir { names += Self.vars(in: dir) }
        for entry in node.env { names += Self.vars(in: entry.value) }
        for entry in shared where node.env[entry.name] == nil { names += entry.vars }
        guard names.count > 1 else { return names }
        return Array(Set(names)).sorted()
    }

    /// The vars `text` reads as `${{ vars.NAME }}`.
    static func vars(in text: String) -> [String] {
        guard Template.containsExpression(text) else { return [] }
        return Template.parse(text).template.expressions.compactMap { expression in
            if case .variable(let name) = expression.reference { return name }
            return nil
        }
    }
}
