import ArgumentParser
import MoonGraph

/// `moon list [FILE]`: the nodes, with descriptions, needs and queue;
/// `internal:` nodes are left out, as the command line cannot select them.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the nodes of a graph with their descriptions, needs and queue.")

    @Argument(help: "The graph file (default: moon.yaml or moon.yml).")
    var file: String?

    @Flag(help: "Print only the names the command line can select, one per line (for scripts and shell completion).")
    var names = false

    func run() throws {
        let graph = try GraphFile.load(file ?? GraphFileLocator.defaultFile()).graph
        if names {
            for name in NameCompletion.names(in: graph) { Console.line(name) }
            return
        }
        Self.print(graph)
    }

    static func print(_ graph: Graph) {
        let width = min(32, graph.nodes.lazy.filter { !$0.isInternal }.map(\.name.count).max() ?? 0)
        for node in graph.nodes where !node.isInternal {
            let name = node.name.padding(toLength: max(width, node.name.count), withPad: " ", startingAt: 0)
            var details: [String] = []
            if let description = node.description { details.append(description) }
            var meta: [String] = []
            let needs = node.needs.filter { !graph.nodes[$0].isInternal }
            if !needs.isEmpty { meta.append("needs: " + needs.map { graph.nodes[$0].name }.joined(separator: ", ")) }
            if graph.queues.count > 1 || node.queue != 0 { meta.append("queue: \(graph.queues[node.queue].name)") }
            if !meta.isEmpty { details.append("(\(meta.joined(separator: "; ")))") }
            Console.line(details.isEmpty ? node.name : "\(name)  \(details.joined(separator: " "))")
        }
    }
}
