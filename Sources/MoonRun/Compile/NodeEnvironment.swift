import Foundation
import MoonCommand
import MoonGraph
import MoonProcess
import MoonSystem
import Synchronization

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
    /// The run's secrets, which only the nodes' own values read.
    let secrets: SecretValues
    /// dotenv, moon's environment and the file's `env:`, resolved and
    /// encoded once.
    private let shared: Result<ProcessEnvironment.Base, Interpolator.Failure>
    /// The graph's `env:` entries whose values, made with expressions, no
    /// shell may read (`ShellTemplate.checkEnvironmentValue`): each fails a
    /// node that runs a shell, unless its own `env:` replaces it.
    private let sharedRefusals: [(name: String, failure: String)]
    /// The size of the shared layers, for `ExecSize`.
    private let sharedBytes: Int
    /// Programs found on PATH, for this run's launches: a new run (a rerun
    /// in watch mode) searches again, so a program installed meanwhile counts.
    let programs = ProgramCache()

    /// moon's own variables that no node sees, not even through `${{ env.X }}`:
    /// the remote cache's token is a secret for moon alone.
    static let withheld: Set<String> = ["MOON_REMOTE_CACHE_TOKEN"]

    /// moon's environment, read from `environ` as `ProcessInfo.environment`
    /// reads it (split at the first `=`, a later entry of a name wins, an
    /// entry that is not UTF-8 left out) without Foundation's bridging.
    static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        let entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard let entries else { return result }
        var index = 0
        while let entry = entries[index] {
            index += 1
            guard let text = String(validatingCString: entry), let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) else { continue }
            result[String(text[..<equals])] = String(text[text.utf8.index(after: equals)...])
        }
        return result
    }

    init(graph: Graph, base: [String: String] = NodeEnvironment.processEnvironment(), secrets: SecretValues = SecretValues()) {
        self.graph = graph
        self.base = base
        self.secrets = secrets
        let dir = graph.directory
        let cwd = LinuxCalls.workingDirectory() ?? FileManager.default.currentDirectoryPath
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
        var refusals: [(name: String, failure: String)] = []
        do {
            for entry in graph.env {
                let value = try interpolator.string(entry.value)
                env[entry.name] = value
                guard Template.containsExpression(entry.value) else { continue }
                do { try ShellTemplate.checkEnvironmentValue(value, name: entry.name) } catch {
                    refusals.append((entry.name, "in the graph's env: \(error)"))
                }
            }
            shared = .success(ProcessEnvironment.Base(env))
        } catch let failure as Interpolator.Failure {
            shared = .failure(Interpolator.Failure(message: "in the graph's env: \(failure.message)"))
        } catch {
            shared = .failure(Interpolator.Failure(message: "\(error)"))
        }
        sharedRefusals = refusals
        sharedBytes = ExecSize.bytes(of: env)
    }

    /// The node's environment and the interpolator for its `run`, `with` and `dir`.
    func prepare(_ node: Node, attempt: Int, inputs: NodeInputs, outputFile: String?) throws -> Prepared {
        let shared = try shared.get()
        var interpolator = Interpolator(vars: graph.vars, env: shared.values, inputs: inputs, node: node)
        interpolator.secrets = secrets
        var env = ProcessEnvironment(base: shared, capacity: node.env.count + 4)
        let runsShell = node.runsShell
        for entry in node.env {
            do {
                let value = try interpolator.string(entry.value)
                if runsShell, Template.containsExpression(entry.value) { try ShellTemplate.checkEnvironmentValue(value, name: entry.name) }
                env.set(entry.name, value)
            } catch let failure as Interpolator.Failure {
                throw Interpolator.Failure(message: "in env \(entry.name): \(failure.message)")
            } catch {
                throw Interpolator.Failure(message: "\(error)")
            }
        }
        if runsShell, let refused = sharedRefusals.first(where: { refusal in !node.env.contains { $0.name == refusal.name } }) {
            throw Interpolator.Failure(message: refused.failure)
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
            env.set(contentsOf: rendered.bindings.lazy.map { ($0.name, $0.value) })
            argv = node.shell.arguments(for: rendered.script)
        case .exec(let arguments): argv = try interpolator.arguments(arguments)
        case .builtin, .group: return nil
        }
        guard let program = argv.first else { return nil }
        try ExecSize.check(argv: argv, environment: env, baseBytes: sharedBytes, rendered: node.action)
        let directory = try workingDirectory(for: node, interpolator: interpolator)
        return ProcessSpec(executable: programs.lookup(program, path: env["PATH"]) ?? program,
                           arguments: Array(argv.dropFirst()), processEnvironment: env,
                           workingDirectory: runsInGraphDirectory && directory == graphDirectory ? nil : directory)
    }

}

/// Remembers where `sh`, `bash` and other bare program names were found on a
/// PATH, so a graph of a thousand shell nodes searches the PATH once, not a
/// thousand times. Only absolute PATH entries are cached; anything it
/// cannot resolve is left to the launcher, which reports it precisely.
final class ProgramCache: @unchecked Sendable {
    private let lock = Mutex(())
    /// Answers found, most recent last. A graph has a handful of programs
    /// and PATHs, and nodes pass the very same PATH string (from the shared
    /// environment), whose comparison is then immediate: a scan beats
    /// hashing a long `name + "\0" + path` key per lookup.
    private var found: [(name: String, path: String, program: String)] = []
    private static let limit = 64

    func lookup(_ name: String, path: String?) -> String? {
        // (Not `contains("/")`: with Foundation imported that is a slow NSString search.)
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "/")), let path else { return nil }
        if let hit = lock.withLock({ _ in found.last(where: { $0.name == name && $0.path == path }) }) { return hit.program }
        for entry in path.split(separator: ":") where entry.hasPrefix("/") {
            // A String first: `Substring + String` is generic code, looked up at run time.
            let candidate = String(entry) + "/" + name
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                lock.withLock { _ in
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
    /// Whether the node's process is a shell: a shell-form `run`, or an
    /// exec form whose program is one (`[bash, -c, …]`).
    var runsShell: Bool {
        switch action {
        case .shell: return true
        case .exec(let arguments): return arguments.first.map(ShellTemplate.isShell) ?? false
        case .builtin, .group: return false
        }
    }

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

/// What the kernel accepts for a new program: all of its arguments and
/// environment within ARG_MAX, and (Linux) each string within
/// MAX_ARG_STRLEN. A node that would pass either fails at once with the
/// sizes, rather than building a process that `execve` refuses (E2BIG).
enum ExecSize {
    /// Linux's limit on one argument or `NAME=value` string: 32 pages.
    static let stringLimit: Int = {
        #if os(Linux)
        return 32 * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return Int.max
        #endif
    }()

    /// The system's limit on arguments and environment together, with a
    /// pointer per string, as Linux counts them.
    static let totalLimit: Int = {
        let limit = sysconf(Int32(_SC_ARG_MAX))
        return limit > 0 ? Int(limit) : 128 * 1024
    }()

    /// The bytes of `base`'s entries, as `check` counts them.
    static func bytes(of base: [String: String]) -> Int {
        var bytes = 0
        for (name, value) in base { bytes += name.utf8.count + value.utf8.count + 2 }
        return bytes
    }

    /// `baseBytes`: `bytes(of:)` the environment's shared base.
    static func check(argv: [String], environment: ProcessEnvironment, baseBytes: Int, rendered action: NodeAction) throws {
        var total = 0
        var strings = 0
        for (k, argument) in argv.enumerated() {
            let size = argument.utf8.count + 1
            if size > stringLimit {
                let what: String
                if case .shell = action, k == argv.count - 1 {
                    what = "its shell script (with a reference to a variable for each item of its list values) would be \(size) bytes"
                } else {
                    what = "argument \(k) of its command ('\(ShellTemplate.preview(argument))') would be \(size) bytes"
                }
                throw Interpolator.Failure(message: "\(what), above the system's limit of \(stringLimit) bytes for one argument; pass a long list through a file")
            }
            total += size
        }
        strings += argv.count
        for override in environment.overrides {
            let size = override.name.utf8.count + override.value.utf8.count + 2
            if size > stringLimit {
                throw Interpolator.Failure(message: "its environment variable \(override.name) would be \(size) bytes, above the system's limit of \(stringLimit) bytes for one variable; pass a long value through a file")
            }
            if let old = environment.base?.values[override.name] {
                total -= override.name.utf8.count + old.utf8.count + 2
                strings -= 1
            }
            total += size
        }
        strings += environment.overrides.count
        if let base = environment.base {
            total += baseBytes
            strings += base.values.count
        }
        total += strings * MemoryLayout<UnsafeRawPointer>.size
        if total > totalLimit {
            throw Interpolator.Failure(message: "its arguments and environment would be \(total) bytes (\(argv.count) arguments, \(strings - argv.count) environment variables), above the system's limit of \(totalLimit) bytes for a new program (ARG_MAX); pass a long list through a file")
        }
    }

}
