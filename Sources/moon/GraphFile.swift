import Foundation
import MoonProcess
import MoonDocument
import MoonGraph

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
            // A large YAML tree is freed on another thread: for 1000 nodes
            // with 20 needs each, freeing its 22,000 objects was ~1 ms
            // before the first node could start.
            if root.nodeCount > 5000 { BackgroundThread.run { withExtendedLifetime(root) {} } }
        } catch {
            result = GraphLoadResult(graph: nil, diagnostics: error.items)
        }
        if var graph = result.graph {
            // `dotenv:` files are read here, so a missing one is an invalid graph (exit 2) for check and run alike.
            result.diagnostics += graph.loadDotenv { FileManager.default.contents(atPath: $0).map { [UInt8]($0) } }
            result.graph = graph
        }
        return .success(Parsed(source: source, result: result))
    }

    /// Prints what `parse` found; throws `MoonExit.invalid` after printing every error.
    static func finish(_ parsed: Result<Parsed, Error>, color: Bool = Terminal.stderrColor) throws -> GraphFile {
        let parsed = try parsed.get()
        print(parsed.result.diagnostics, source: parsed.source, color: color)
        guard !parsed.result.hasErrors, let graph = parsed.result.graph else { throw MoonExit.invalid }
        return GraphFile(source: parsed.source, graph: graph)
    }

    static func read(_ path: String) throws -> SourceFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                throw CLIError(isDirectory.boolValue ? "\(path) is a directory, not a graph file" : "cannot read \(path): permission denied")
            }
            throw CLIError("no such file: \(path)")
        }
        return SourceFile(path: path, bytes: [UInt8](data))
    }

    static func print(_ diagnostics: [Diagnostic], source: SourceFile, color: Bool) {
        guard !diagnostics.isEmpty else { return }
        var text = DiagnosticRenderer(color: color).render(diagnostics, source: source)
        if !text.hasSuffix("\n") { text += "\n" }
        text += DiagnosticRenderer.summary(of: diagnostics, path: source.path) + "\n"
        FileHandle.standardError.write(Data(text.utf8))
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

    static var noColorEnvironment: Bool {
        if let value = variable("NO_COLOR"), !value.isEmpty { return true }
        return false
    }

    static var forceColorEnvironment: Bool {
        for key in ["FORCE_COLOR", "CLICOLOR_FORCE"] {
            if let value = variable(key), !value.isEmpty, value != "0" { return true }
        }
        return false
    }

    /// Colour for diagnostics on stderr: only on a terminal, never with NO_COLOR.
    static var stderrColor: Bool {
        if noColorEnvironment { return false }
        if forceColorEnvironment { return true }
        return isatty(2) == 1 && variable("TERM") != "dumb"
    }
}
