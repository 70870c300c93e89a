import ArgumentParser
import MoonGraph

/// `moon list [FILE]`: the nodes, with descriptions, needs and queue.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the nodes of a graph with their descriptions, needs and queue.")

    @Argument(help: "The graph file (default: moon.yaml or moon.yml).")
    var file: String?

    func run() throws {
        let graph = try GraphFile.load(file ?? GraphFileLocator.defaultFile()).graph
        let width = min(32, graph.nodes.map(\.name.count).max() ?? 0)
        for node in graph.nodes where !node.isInternal {
            let name = node.name.padding(toLength: max(width, node.name.count), withPad: " ", startingAt: 0)
            var details: [String] = []
            if let description = node.description { details.append(description) }
            var meta: [String] = []
            if !node.needs.isEmpty { meta.append("needs: " + node.needs.map { graph.nodes[$0].name }.joined(separator: ", ")) }
            if graph.queues.count > 1 || node.queue != 0 { meta.append("queue: \(graph.queues[node.queue].name)") }
            if !meta.isEmpty { details.append("(\(meta.joined(separator: "; ")))") }
            Console.line(details.isEmpty ? node.name : "\(name)  \(details.joined(separator: " "))")
        }
    }
}
