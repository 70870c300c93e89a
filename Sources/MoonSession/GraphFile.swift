import Foundation
import MoonDocument
import MoonGraph
import MoonReport
import MoonState
import Synchronization

/// Reads and validates a graph file for every subcommand, printing its
/// diagnostics compiler-style on stderr. One place decides that an invalid
/// file ends moon with exit code 2.
package struct GraphFile {
    /// The graph file's text, for diagnostics that quote it; read when
    /// first asked for after a load from `GraphCache`.
    package var source: SourceFile { text.file }
    private let text: SourceText
    package let graph: Graph
    /// The paths of the graph files `includes:` read, for watch mode.
    package var included: [String] = []
    /// The `for-each` globs the load expanded, for watch mode.
    package var fanOutGlobs: [FanOutGlob] = []

    package init(source: SourceFile, graph: Graph, included: [String] = [], fanOutGlobs: [FanOutGlob] = []) {
        text = SourceText(source)
        self.graph = graph
        self.included = included
        self.fanOutGlobs = fanOutGlobs
    }

    private init(path: String, graph: Graph, included: [String], fanOutGlobs: [FanOutGlob]) {
        text = SourceText(path: path)
        self.graph = graph
        self.included = included
        self.fanOutGlobs = fanOutGlobs
    }

    /// A file's text read once, now or when first needed.
    private final class SourceText: Sendable {
        private let path: String
        private let read: Mutex<SourceFile?>

        init(_ file: SourceFile) {
            path = file.path
            read = Mutex(file)
        }

        init(path: String) {
            self.path = path
            read = Mutex(nil)
        }

        var file: SourceFile {
            read.withLock { file in
                if let file { return file }
                let loaded = (try? GraphFile.read(path)) ?? SourceFile(path: path, bytes: [])
                file = loaded
                return loaded
            }
        }
    }

    /// A file read and checked, its diagnostics not printed yet.
    package struct Parsed {
        package let source: SourceFile
        package let result: GraphLoadResult
        package var fanOutGlobs: [FanOutGlob] = []
    }

    /// Loads `path`; prints warnings; throws `PrintedErrors` after
    /// printing every error. A file that cannot be read is a `CLIError`.
    /// A graph whose files did not change since a load without diagnostics
    /// comes from `GraphCache`, exactly as that load made it.
    package static func load(_ path: String, overrides: [String: String] = [:], color: Bool = Terminal.stderrColor) throws -> GraphFile {
        let started = GraphCache.now()
        let discovered = GraphFileLocator.wasDiscovered(path)
        let cache = GraphCache.standard
        if let hit = cache?.lookup(path, overrides: overrides, discovered: discovered, files: discovered ? discoveredFiles : files) {
            return GraphFile(path: path, graph: hit.graph, included: hit.included, fanOutGlobs: hit.globs)
        }
        let reads = GraphCache.Reads()
        let parsed = try parse(path, overrides: overrides, reads: reads)
        print(parsed.result.diagnostics, source: parsed.source, color: color, included: parsed.result.included)
        guard !parsed.result.hasErrors, let graph = parsed.result.graph else {
            if let hint = GraphFileLocator.nodeHint(forInvalidFile: parsed.source.path) { Console.errorLine(hint) }
            throw PrintedErrors()
        }
        let included = parsed.result.included.map(\.path)
        // A load with warnings is not stored: a hit prints nothing.
        if parsed.result.diagnostics.isEmpty {
            cache?.store(graph, included: included, path: path, overrides: overrides, discovered: discovered, reads: reads, started: started)
        }
        return GraphFile(source: parsed.source, graph: graph, included: included, fanOutGlobs: parsed.fanOutGlobs)
    }

    /// Reads and checks `path`, printing nothing. A file that cannot be
    /// read is a `CLIError`.
    package static func parse(_ path: String, overrides: [String: String] = [:]) throws -> Parsed {
        try parse(path, overrides: overrides, reads: nil)
    }

    /// `parse`, recording in `reads` what the load read besides `path`.
    static func parse(_ path: String, overrides: [String: String], reads: GraphCache.Reads?) throws -> Parsed {
        let source = try read(path)
        // A graph moon found by searching reads only includes and dotenv files that pass the same rule as itself.
        let discovered = GraphFileLocator.wasDiscovered(path)
        var result: GraphLoadResult
        var foreign: String?
        let globs = FanOutGlobLog()
        do {
            let root = try YAMLLoader.load(source)
            foreign = ForeignGraphFile.moonrepoMessage(root, path: source.path)
            let access = discovered ? discoveredFiles : files
            result = foreign != nil ? GraphLoadResult(graph: nil, diagnostics: []) : GraphLoader.decode(root, path: source.path, overrides: overrides, source: source,
                                        files: globs.recording(reads?.recording(access) ?? access))
        } catch {
            result = GraphLoadResult(graph: nil, diagnostics: error.items)
        }
        // One line naming the other tool, not a diagnostic per key it does not know.
        if let foreign { throw CLIError(foreign) }
        if var graph = result.graph {
            // `dotenv:` files are read here, so a missing one is an invalid graph (exit 2) for check and run alike.
            let reader = discovered ? readDiscoveredDotenv : readDotenv
            result.diagnostics += graph.loadDotenv(reading: { path in
                reads?.note(path)
                return reader(path)
            })
            result.graph = graph
        }
        return Parsed(source: source, result: result, fanOutGlobs: globs.recorded)
    }

    /// What the loader reads besides the file: included graph files (by
    /// `InputFile`'s rules) and the files of `for-each` globs.
    package static let files = GraphFileAccess(
        read: { path in
            do {
                let bytes = try InputFile.read(path, limit: InputFile.graphLimit, kind: "graph file", stopAtNUL: true)
                if let problem = InputFile.binaryProblem(path, bytes) { return .failure(.init(problem)) }
                return .success(bytes)
            } catch let refusal as InputFile.Refusal {
                return .failure(.init(refusal.message))
            } catch {
                return .failure(.init("\(error)"))
            }
        },
        glob: { directory, pattern, exclude in
            let scan = SourceScanner(root: directory).scan(matching: [pattern] + exclude.map { "!" + $0 })
            return GraphFileAccess.GlobMatches(files: scan.files.map(\.path), unnamable: scan.unnamable, directories: scan.directories)
        })

    /// `files` for a graph moon found by searching: an include that another
    /// user owns or can change is refused (`DiscoveryTrust`).
    package static let discoveredFiles = GraphFileAccess(
        read: { path in
            if let problem = DiscoveryTrust.problem(path) { return .failure(.init(untrusted(problem))) }
            return files.read(path)
        },
        glob: files.glob)

    private static func untrusted(_ problem: String) -> String {
        "\(problem); moon found the graph file by searching, so it reads only files that you (or root) own and no other "
            + "user can change (name the graph file on the command line to read it on purpose)"
    }

    private static func readDiscoveredDotenv(_ path: String) -> Result<[UInt8], DotenvReadFailure> {
        if let problem = DiscoveryTrust.problem(path) { return .failure(DotenvReadFailure(reason: untrusted(problem))) }
        return readDotenv(path)
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

    /// The file's bytes, by `InputFile`'s rules: a device is refused, a
    /// file over `InputFile.graphLimit` too, and a binary file is read only
    /// up to its first NUL, which the loader then locates.
    package static func read(_ path: String) throws -> SourceFile {
        do {
            return SourceFile(path: path, bytes: try InputFile.read(path, limit: InputFile.graphLimit, kind: "graph file", stopAtNUL: true))
        } catch {
            throw CLIError(error.message)
        }
    }

    package static func print(_ diagnostics: [Diagnostic], source: SourceFile, color: Bool, included: [SourceFile] = []) {
        guard !diagnostics.isEmpty else { return }
        var text = DiagnosticRenderer(color: color).render(diagnostics, source: source, others: included)
        if !text.hasSuffix("\n") { text += "\n" }
        text += DiagnosticRenderer.summary(of: diagnostics, path: source.path) + "\n"
        Console.rawError(text)
    }
}
