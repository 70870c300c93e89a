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
        /// The node's whole environment: the shared layers (encoded once
        /// for all nodes), then the node's `env:` and MOON_* as overrides.
        var environment: ProcessEnvironment
        /// Resolves with the shared layers only (what a node's `env:` sees).
        fileprivate var sharedInterpolator: Interpolator

        /// The interpolator for `run`, `with` and `dir`: the node's whole
        /// environment. Built on each read (the dictionary is a copy of the
        /// shared one): read it only when a text has an expression.
        var interpolator: Interpolator {
            var interpolator = sharedInterpolator
            interpolator.env = environment.dictionary
            return interpolator
        }
    }

    let graph: Graph
    /// The graph file's directory, absolute, for `dir:` and `MOON_GRAPH_DIR`.
    let graphDirectory: String
    /// moon's own working directory, when it is the graph's directory (a
    /// node that runs there then inherits it: no `chdir` per spawn).
    private let runsInGraphDirectory: Bool
    /// moon's own environment.
    let base: [String: String]
    /// dotenv, moon's environment and the file's `env:`, resolved and
    /// encoded once.
    private let shared: Result<ProcessEnvironment.Base, Interpolator.Failure>

    /// moon's own variables that no node sees, not even through `${{ env.X }}`:
    /// the remote cache's token is a secret for moon alone.
    static let withheld: Set<String> = ["MOON_REMOTE_CACHE_TOKEN"]

    init(graph: Graph, base: [String: String] = ProcessInfo.processInfo.environment) {
        self.graph = graph
        self.base = base
        let dir = graph.directory
        let cwd = FileManager.default.currentDirectoryPath
        if dir.hasPrefix("/") {
            graphDirectory = dir
        } else {
            graphDirectory = dir == "." ? cwd : URL(fileURLWithPath: dir, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true)).standardizedFileURL.path
        }
        runsInGraphDirectory = graphDirectory == cwd
        var env: [String: String] = [:]
        for entry in graph.dotenvValues { env[entry.name] = entry.value }
        for (name, value) in base where !Self.withheld.contains(name) { env[name] = value }
        let interpolator = Interpolator(vars: graph.vars, env: env, inputs: NodeInputs(values: []))
        do {
            for entry in graph.env { env[entry.name] = try interpolator.string(entry.value) }
            shared = .success(ProcessEnvironment.Base(env))
        } catch let failure as Interpolator.Failure {
            shared = .failure(Interpolator.Failure(message: "in the graph's env: \(failure.message)"))
        } catch {
            shared = .failure(Interpolator.Failure(message: "\(error)"))
        }
    }

    /// The node's environment and the interpolator for its `run`, `with` and `dir`.
    func prepare(_ node: Node, attempt: Int, inputs: NodeInputs, outputFile: String?) throws -> Prepared {
        let shared = try shared.get()
        let interpolator = Interpolator(vars: graph.vars, env: shared.values, inputs: inputs, node: node)
        var env = ProcessEnvironment(base: shared, capacity: node.env.count + 4)
        for entry in node.env {
            do {
                env.set(entry.name, try interpolator.string(entry.value))
            } catch let failure as Interpolator.Failure {
                throw Interpolator.Failure(message: "in env \(entry.name): \(failure.message)")
            }
        }
        env.set("MOON_NODE", node.name)
        env.set("MOON_ATTEMPT", String(attempt))
        env.set("MOON_GRAPH_DIR", graphDirectory)
        if let outputFile { env.set("MOON_OUTPUT", outputFile) }
        return Prepared(environment: env, sharedInterpolator: interpolator)
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
        // Without an expression in `run`, `with` or `dir` nothing reads the
        // environment: the node's whole one is then not built as a dictionary.
        let interpolator = node.commandHasExpression ? prepared.interpolator : prepared.sharedInterpolator
        let argv: [String]
        var env = prepared.environment
        switch node.action {
        case .shell(let script):
            let rendered = try interpolator.script(script, shell: node.shell)
            // The values reach the shell only through its environment.
            for binding in rendered.bindings { env.set(binding.name, binding.value) }
            argv = node.shell.arguments(for: rendered.script)
        case .exec(let arguments): argv = try interpolator.arguments(arguments)
        case .builtin, .group: return nil
        }
        guard let program = argv.first else { return nil }
        let directory = try workingDirectory(for: node, interpolator: interpolator)
        return ProcessSpec(executable: ProgramCache.shared.lookup(program, path: env["PATH"]) ?? program,
                           arguments: Array(argv.dropFirst()), processEnvironment: env,
                           workingDirectory: runsInGraphDirectory && directory == graphDirectory ? nil : directory)
    }

}

/// Remembers where `sh`, `bash` and other bare program names were found on a
/// PATH, so a graph of a thousand shell nodes searches the PATH once, not a
/// thousand times. Only absolute PATH entries are cached; anything it
/// cannot resolve is left to the launcher, which reports it precisely.
final class ProgramCache: @unchecked Sendable {
    static let shared = ProgramCache()
    private let lock = Lock()
    /// Answers found, most recent last. A graph has a handful of programs
    /// and PATHs, and nodes pass the very same PATH string (from the shared
    /// environment), whose comparison is then immediate: a scan beats
    /// hashing a long `name + "\0" + path` key per lookup.
    private var found: [(name: String, path: String, program: String)] = []
    private static let limit = 64

    func lookup(_ name: String, path: String?) -> String? {
        // (Not `contains("/")`: with Foundation imported that is a slow NSString search.)
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "/")), let path else { return nil }
        if let hit = lock.withLock({ found.last(where: { $0.name == name && $0.path == path }) }) { return hit.program }
        for entry in path.split(separator: ":") where entry.hasPrefix("/") {
            let candidate = entry + "/" + name
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                lock.withLock {
                    if found.count >= Self.limit { found.removeFirst() }
                    found.append((name, path, candidate))
                }
                return candidate
            }
            // An entry that is relative or unreadable makes the answer depend
            // on more than the PATH: let the launcher search.
        }
        return nil
    }
}

extension Node {
    /// Whether the node's command or `dir` has a `${{ … }}` (a built-in's
    /// `with` may always have one).
    var commandHasExpression: Bool {
        if let dir, Template.containsExpression(dir) { return true }
        switch action {
        case .shell(let script): return Template.containsExpression(script)
        case .exec(let arguments): return arguments.contains(where: Template.containsExpression)
        case .builtin: return true
        case .group: return false
        }
    }
}
