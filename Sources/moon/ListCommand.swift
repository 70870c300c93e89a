import ArgumentParser
import MoonGraph
import MoonSession
import MoonState

/// `moon list [FILE]`: the nodes, with descriptions, needs and queue;
/// `internal:` nodes are left out, as the command line cannot select them.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the nodes of a graph with their descriptions, needs and queue.")

    @Argument(help: "The graph file (default: the nearest moon.yaml or moon.yml, here or above).")
    var file: String?

    @Flag(help: "Print only the names the command line can select, one per line (for scripts and shell completion).")
    var names = false

    @Flag(help: "Show each node's memory and cpus: declared (resources:), or learned from its recent runs.")
    var resources = false

    func run() throws {
        let graph = try GraphFile.load(file ?? GraphFileLocator.defaultFile()).graph
        if names {
            for name in NameCompletion.names(in: graph) { Console.line(name) }
            return
        }
        if resources { return Self.printResources(graph) }
        Self.print(graph)
    }

    /// `--resources`: one line per node (an instance on its own line, as
    /// each learns apart), its memory and cpus and where each comes from.
    static func printResources(_ graph: Graph) {
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        let learned = LearnedResources(graph: graph, store: opened.store)
        let nodes = graph.nodes.filter { !$0.isInternal }
        let rows = nodes.map { node -> [String] in
            let memory: String
            if let declared = node.resources.memory {
                memory = "\(ByteSize.text(declared)) declared"
            } else if let value = learned.learnedMemory(node: node.name) {
                memory = "\(ByteSize.text(value)) learned"
            } else {
                memory = "-"
            }
            let cpus = node.resources.cpus.map { "\($0) declared" } ?? "1"
            return [node.name, memory, cpus]
        }
        let table = [["NODE", "MEMORY", "CPUS"]] + rows
        let widths = (0..<2).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            Console.line(row[0].padding(toLength: widths[0] + 2, withPad: " ", startingAt: 0)
                + row[1].padding(toLength: widths[1] + 2, withPad: " ", startingAt: 0) + row[2])
        }
    }

    /// One line per node; a fan-out's instances share one line under the
    /// fan-out's name (which selects them all), with their count.
    static func print(_ graph: Graph) {
        var rows: [(name: String, node: Node, instances: [String])] = []
        var rowOfTemplate: [String: Int] = [:]
        for node in graph.nodes where !node.isInternal {
            guard let template = node.instance?.template else {
                rows.append((node.name, node, []))
                continue
            }
            if let row = rowOfTemplate[template] {
                rows[row].instances.append(node.name)
            } else {
                rowOfTemplate[template] = rows.count
                rows.append((template, node, [node.name]))
            }
        }
        let width = min(32, rows.map(\.name.count).max() ?? 0)
        for row in rows {
            let name = row.name.padding(toLength: max(width, row.name.count), withPad: " ", startingAt: 0)
            var details: [String] = []
            if let description = row.node.description { details.append(description) }
            var meta: [String] = []
            if !row.instances.isEmpty {
                // A few are listed whole; many by their first and last.
                let shown = row.instances.count <= 6 ? row.instances.joined(separator: ", ")
                    : "\(row.instances[0]) … \(row.instances[row.instances.count - 1])"
                meta.append("\(row.instances.count) instance\(row.instances.count == 1 ? "" : "s"): \(shown)")
            }
            // A need that is an instance shows as its fan-out, once.
            var needs: [String] = []
            for need in row.node.needs where !graph.nodes[need].isInternal || graph.nodes[need].isBarrier {
                let shown = graph.nodes[need].instance?.template ?? graph.nodes[need].name
                if !needs.contains(shown) { needs.append(shown) }
            }
            if !needs.isEmpty { meta.append("needs: " + needs.joined(separator: ", ")) }
            if !row.node.params.isEmpty {
                meta.append("params: " + row.node.params.map { parameter in
                    parameter.defaultValue.map { "\(parameter.name)=\($0)" } ?? "\(parameter.name) (required)"
                }.joined(separator: ", "))
            }
            if graph.queues.count > 1 || row.node.queue != 0 { meta.append("queue: \(graph.queues[row.node.queue].name)") }
            if !meta.isEmpty { details.append("(\(meta.joined(separator: "; ")))") }
            Console.line(details.isEmpty ? row.name : "\(name)  \(details.joined(separator: " "))")
        }
    }
}
