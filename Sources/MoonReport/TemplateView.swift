import MoonGraph
import MoonJSON

/// The graph by template, as `snakemake --rulegraph` draws rules: each
/// `for-each` or `matrix` node once, with its number of instances, every
/// other node as itself, and one edge where any of one's instances needs
/// any of the other's. Linear in the selected nodes and their needs.
struct TemplateView {
    var names: [String] = []
    /// Per entry: its instances (0 for a node that is not a fan-out).
    var instances: [Int] = []
    var edges: [(from: Int, to: Int)] = []

    init(_ plan: Plan) {
        let graph = plan.graph
        var position: [String: Int] = [:]
        var entry = [Int](repeating: -1, count: graph.nodes.count)
        for v in plan.selected {
            let node = graph.nodes[v]
            // A barrier is named as its template: it joins the template's entry.
            let name = node.instance?.template ?? node.name
            let p: Int
            if let known = position[name] {
                p = known
            } else {
                p = names.count
                position[name] = p
                names.append(name)
                instances.append(0)
            }
            entry[v] = p
            if node.instance != nil { instances[p] += 1 }
        }
        var seen = Set<Int>()
        for v in plan.selected {
            for need in graph.nodes[v].needs where plan.isSelected(need) {
                let (from, to) = (entry[need], entry[v])
                guard from != to, seen.insert(from * names.count + to).inserted else { continue }
                edges.append((from, to))
            }
        }
    }

    func label(_ p: Int) -> String { instances[p] > 0 ? "\(names[p]) ×\(instances[p])" : names[p] }
}

extension GraphRenderer {
    /// `moon graph --templates`: the graph by template (`TemplateView`), in `format`.
    public static func templates(_ plan: Plan, format: Format) -> String {
        let view = TemplateView(plan)
        var needs = [[Int]](repeating: [], count: view.names.count)
        for edge in view.edges { needs[edge.to].append(edge.from) }
        switch format {
        case .text:
            let fanOuts = view.instances.count { $0 > 0 }
            let others = view.names.count - fanOuts
            var out = "graph \(plan.graph.name) by template: \(fanOuts) fan-out\(fanOuts == 1 ? "" : "s"), \(others) other node\(others == 1 ? "" : "s")\n"
            let width = view.names.map(\.count).max() ?? 0
            for p in view.names.indices {
                var line = "  " + view.names[p].padding(toLength: width, withPad: " ", startingAt: 0)
                if view.instances[p] > 0 { line += "  \(view.instances[p]) instance\(view.instances[p] == 1 ? "" : "s")" }
                if !needs[p].isEmpty { line += "  needs: " + needs[p].map { view.names[$0] }.joined(separator: ", ") }
                out += line + "\n"
            }
            return out
        case .dot:
            var out = "digraph \(dotQuote(plan.graph.name)) {\n  node [shape=box];\n"
            for p in view.names.indices {
                out += "  \(dotQuote(view.names[p]))"
                out += view.instances[p] > 0 ? " [label=\(dotQuote(view.label(p))), peripheries=2];\n" : ";\n"
            }
            for edge in view.edges { out += "  \(dotQuote(view.names[edge.from])) -> \(dotQuote(view.names[edge.to]));\n" }
            return out + "}\n"
        case .mermaid:
            var out = "flowchart TD\n"
            for p in view.names.indices { out += "  t\(p)[\"\(mermaidLabel(view.label(p)))\"]\n" }
            for edge in view.edges { out += "  t\(edge.from) --> t\(edge.to)\n" }
            return out
        case .json:
            let entries: [JSONValue] = view.names.indices.map { p in
                .object([("name", .string(view.names[p])), ("instances", .int(view.instances[p])),
                         ("needs", .strings(needs[p].map { view.names[$0] }))])
            }
            return JSONValue.object([("name", .string(plan.graph.name)), ("templates", .array(entries))]).pretty() + "\n"
        }
    }
}
