import Foundation
import MoonProcess
import MoonDocument
import MoonGraph
import MoonReport

/// Reads and validates a graph file for every subcommand, printing its
/// diagnostics compiler-style on stderr. One place decides that an invalid
/// file ends moon with exit code 2.
struct GraphFile {
    let source: SourceFile
    let graph: Graph

    /// A file read and checked, its diagnostics not printed yet.
    struct Parsed {
        let source: SourceFile
        let result: GraphLoadResult
    }

    /// Loads `path`; prints warnings; throws `MoonExit.invalid` after printing
    /// every error.
    static func load(_ path: String, overrides: [String: String] = [:], color: Bool = Terminal.stderrColor) throws -> GraphFile {
        try finish(parse(path, overrides: overrides), color: color)
    }

    /// Reads and checks `path`, printing nothing (it may run on another
    /// thread: `EarlyGraph`). A file that cannot be read is a `CLIError`.
    static func parse(_ path: String, overrides: [String: String] = [:]) -> Result<Parsed, Error> {
        let source: SourceFile
        do {
            source = try read(path)
        } catch {
            return .failure(error)
        }
        var result: GraphLoadResult
        do {
            let root = try YAMLLoader.load(source)
            result = GraphLoader.decode(root, path: source.path, overrides: overrides, source: source)
            // The YAML tree is never freed: moon exits soon after (a run
            // keeps it as long as it runs), and the process's end returns
            // its memory at once, where freeing its objects one by one cost
            // ~3.4M instructions (~1 ms here) before the first of 1000 nodes
            // could start, and ~29M (50×20 layers, 22,000 objects) on
            // another thread while the first nodes ran.
            _ = Unmanaged.passRetained(root)
        } catch {
            result = GraphLoadResult(graph: nil, diagnostics: error.items)
        }
        if var graph = result.graph {
            // `dotenv:` files are read here, so a missing one is an invalid graph (exit 2) for check and run alike.
            result.diagnostics += graph.loadDotenv(reading: readDotenv)
            result.graph = graph
        }
        return .success(Parsed(source: source, result: result))
    }

    /// A `dotenv:` file, by `InputFile`'s rules; a binary one is refused here.
    private static func readDotenv(_ path: String) -> Result<[UInt8], DotenvReadFailure> {
        do {
            let bytes = try InputFile.read(path, limit: InputFile.graphLimit, kind: "dotenv file", stopAtNUL: true)
            if let problem = InputFile.binaryProblem(path, bytes) { return .failure(DotenvReadFailure(reason: problem)) }
            return .success(bytes)
        } catch {
            return .failure(DotenvReadFailure(reason: error.message, missing: error.missing))
        }
    }

    /// Prints what `parse` found; throws `MoonExit.invalid` after printing every error.
    static func finish(_ parsed: Result<Parsed, Error>, color: Bool = Terminal.stderrColor) throws -> GraphFile {
        let parsed = try parsed.get()
        print(parsed.result.diagnostics, source: parsed.source, color: color)
        guard !parsed.result.hasErrors, let graph = parsed.result.graph else {
            if let hint = GraphFileLocator.nodeHint(forInvalidFile: parsed.source.path) { Console.errorLine(hint) }
            throw MoonExit.invalid
        }
        return GraphFile(source: parsed.source, graph: graph)
    }

    /// The file's bytes, by `InputFile`'s rules: a device is refused, a
    /// file over `InputFile.graphLimit` too, and a binary file is read only
    /// up to its first NUL, which the loader then locates.
    static func read(_ path: String) throws -> SourceFile {
        do {
            return SourceFile(path: path, bytes: try InputFile.read(path, limit: InputFile.graphLimit, kind: "graph file", stopAtNUL: true))
        } catch {
            throw CLIError(error.message)
        }
    }

    static func print(_ diagnostics: [Diagnostic], source: SourceFile, color: Bool) {
        guard !diagnostics.isEmpty else { return }
        var text = DiagnosticRenderer(color: color).render(diagnostics, source: source)
        if !text.hasSuffix("\n") { text += "\n" }
        text += DiagnosticRenderer.summary(of: diagnostics, path: source.path) + "\n"
        Console.rawError(text)
    }
}

/// What moon knows of its terminal: colour decisions in one place.
enum Terminal {
    /// One variable of moon's environment. (`ProcessInfo.environment` builds
    /// a dictionary of all of them at every call.)
    static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The variables colour decisions read, for `ColorPolicy`.
    static var colorEnvironment: [String: String] {
        var result: [String: String] = [:]
        for name in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM"] { result[name] = variable(name) }
        return result
    }

    /// Colour for diagnostics on stderr, by the rules of stdout's
    /// (`ColorPolicy`): `choice` is the command's `--color`, for those that have one.
    static func stderrColor(_ choice: ColorPolicy.Choice = .auto) -> Bool {
        ColorPolicy.resolve(choice, environment: colorEnvironment, fd: 2).enabled
    }

    static var stderrColor: Bool { stderrColor() }
}
