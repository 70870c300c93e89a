import Foundation
import MoonGraph
import MoonCommand
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
        let env = environment(for: node, attempt: attempt)
        return ProcessSpec(executable: ProgramCache.shared.lookup(program, path: env["PATH"]) ?? program,
                           arguments: Array(argv.dropFirst()), environment: env,
                           workingDirectory: workingDirectory(for: node))
    }
}

/// Remembers where `sh`, `bash` and other bare program names were found on a
/// PATH, so a graph of a thousand shell nodes searches the PATH once, not a
/// thousand times (in a perf profile the search was over half of the
/// launcher's own CPU time per node). Only absolute PATH entries are cached; anything it
/// cannot resolve is left to the launcher, which reports it precisely.
final class ProgramCache: @unchecked Sendable {
    static let shared = ProgramCache()
    private let lock = Lock()
    private var found: [String: String] = [:]

    func lookup(_ name: String, path: String?) -> String? {
        guard !name.isEmpty, !name.contains("/"), let path else { return nil }
        let key = name + "\u{0}" + path
        if let hit = lock.withLock({ found[key] }) { return hit }
        for entry in path.split(separator: ":") where entry.hasPrefix("/") {
            let candidate = entry + "/" + name
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                lock.withLock { found[key] = candidate }
                return candidate
            }
            // An entry that is relative or unreadable makes the answer depend
            // on more than the PATH: let the launcher search.
        }
        return nil
    }
}
