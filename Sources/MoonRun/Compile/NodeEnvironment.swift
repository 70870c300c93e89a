import Foundation
import MoonCommand
import MoonGraph
import MoonProcess

/// Builds what a node runs with, per attempt: argv, environment and working
/// directory (DESIGN.md §2), with `${{ … }}` resolved (docs/dataflow.md).
///
/// The environment is layered: the `dotenv:` files, then moon's own
/// environment (so `FOO=x moon run` beats `.env`), then the file's `env:`,
/// then the node's, then MOON_NODE, MOON_ATTEMPT, MOON_GRAPH_DIR and
/// MOON_OUTPUT. `${{ env.X }}` reads the layers below the mapping it is in:
/// in the file's `env:`, dotenv and moon's environment; in a node's `env:`,
/// also the file's; in `run`, `with` and `dir`, the node's whole environment.
struct NodeEnvironment {
    /// What an attempt runs with, once its expressions are resolved.
    struct Prepared {
        var environment: [String: String]
        var interpolator: Interpolator
    }

    let graph: Graph
    /// The graph file's directory, absolute, for `dir:` and `MOON_GRAPH_DIR`.
    let graphDirectory: String
    /// moon's own environment.
    let base: [String: String]
    /// dotenv, moon's environment and the file's `env:`, resolved once.
    private let shared: Result<[String: String], Interpolator.Failure>

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
        var env: [String: String] = [:]
        for entry in graph.dotenvValues { env[entry.name] = entry.value }
        for (name, value) in base { env[name] = value }
        let interpolator = Interpolator(vars: graph.vars, env: env, inputs: NodeInputs(values: []))
        do {
            for entry in graph.env { env[entry.name] = try interpolator.string(entry.value) }
            shared = .success(env)
        } catch let failure as Interpolator.Failure {
            shared = .failure(Interpolator.Failure(message: "in the graph's env: \(failure.message)"))
        } catch {
            shared = .failure(Interpolator.Failure(message: "\(error)"))
        }
    }

    /// The node's environment and the interpolator for its `run`, `with` and `dir`.
    func prepare(_ node: Node, attempt: Int, inputs: NodeInputs, outputFile: String?) throws -> Prepared {
        var env = try shared.get()
        var interpolator = Interpolator(vars: graph.vars, env: env, inputs: inputs)
        for entry in node.env {
            do {
                env[entry.name] = try interpolator.string(entry.value)
            } catch let failure as Interpolator.Failure {
                throw Interpolator.Failure(message: "in env \(entry.name): \(failure.message)")
            }
        }
        env["MOON_NODE"] = node.name
        env["MOON_ATTEMPT"] = String(attempt)
        env["MOON_GRAPH_DIR"] = graphDirectory
        if let outputFile { env["MOON_OUTPUT"] = outputFile }
        interpolator.env = env
        return Prepared(environment: env, interpolator: interpolator)
    }

    func workingDirectory(for node: Node, interpolator: Interpolator) throws -> String {
        guard let written = node.dir, !written.isEmpty else { return graphDirectory }
        let dir = try interpolator.string(written)
        if dir.isEmpty { return graphDirectory }
        return dir.hasPrefix("/") ? dir : graphDirectory + "/" + dir
    }

    /// The process of a shell or exec node; nil for a built-in. Throws an
    /// `Interpolator.Failure` when an expression cannot be resolved.
    func processSpec(for node: Node, attempt: Int, inputs: NodeInputs = NodeInputs(values: []),
                     outputFile: String? = nil) throws -> ProcessSpec? {
        let prepared = try prepare(node, attempt: attempt, inputs: inputs, outputFile: outputFile)
        let argv: [String]
        switch node.action {
        case .shell(let script): argv = node.shell.arguments(for: try prepared.interpolator.script(script, shell: node.shell))
        case .exec(let arguments): argv = try arguments.map(prepared.interpolator.string)
        case .builtin: return nil
        }
        guard let program = argv.first else { return nil }
        let env = prepared.environment
        return ProcessSpec(executable: ProgramCache.shared.lookup(program, path: env["PATH"]) ?? program,
                           arguments: Array(argv.dropFirst()), environment: env,
                           workingDirectory: try workingDirectory(for: node, interpolator: prepared.interpolator))
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
        // (Not `contains("/")`: with Foundation imported that is a slow NSString search.)
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "/")), let path else { return nil }
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
