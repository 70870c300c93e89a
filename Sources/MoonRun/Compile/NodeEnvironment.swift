import Foundation
import MoonGraph
import MoonProcess

/// Builds the process a shell or exec node runs: argv, environment and
/// working directory (DESIGN.md §2, issue 4).
struct NodeEnvironment {
    let graph: Graph
    /// The graph file's directory, absolute, for `dir:` and `MOON_GRAPH_DIR`.
    let graphDirectory: String
    /// moon's own environment, the base of every node's.
    let base: [String: String]

    init(graph: Graph, base: [String: String] = ProcessInfo.processInfo.environment) {
        self.graph = graph
        self.base = base
        let dir = graph.directory
        if dir.hasPrefix("/") {
            graphDirectory = dir
        } else {
            let cwd = FileManager.default.currentDirectoryPath
            graphDirectory = dir == "." ? cwd : URL(fileURLWithPath: dir, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true)).standardizedFileURL.path
        }
    }

    /// Environment: moon's own, then the file's `env:`, then the node's, plus
    /// MOON_NODE, MOON_ATTEMPT and MOON_GRAPH_DIR.
    func environment(for node: Node, attempt: Int) -> [String: String] {
        var env = base
        for entry in graph.environment(for: node) { env[entry.name] = entry.value }
        env["MOON_NODE"] = node.name
        env["MOON_ATTEMPT"] = String(attempt)
        env["MOON_GRAPH_DIR"] = graphDirectory
        return env
    }

    func workingDirectory(for node: Node) -> String {
        guard let dir = node.dir, !dir.isEmpty else { return graphDirectory }
        return dir.hasPrefix("/") ? dir : graphDirectory + "/" + dir
    }

    /// The process of a shell or exec node; nil for a built-in.
    func processSpec(for node: Node, attempt: Int) -> ProcessSpec? {
        let argv: [String]
        switch node.action {
        case .shell(let script): argv = node.shell.arguments(for: script)
        case .exec(let arguments): argv = arguments
        case .builtin: return nil
        }
        guard let program = argv.first else { return nil }
        return ProcessSpec(executable: program, arguments: Array(argv.dropFirst()),
                           environment: environment(for: node, attempt: attempt),
                           workingDirectory: workingDirectory(for: node))
    }
}
