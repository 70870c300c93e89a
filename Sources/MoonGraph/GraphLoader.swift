import MoonDocument

/// The outcome of loading a graph file: the graph when the file is valid, and
/// every diagnostic found (errors and warnings, in source order) either way.
public struct GraphLoadResult: Sendable {
    /// nil when `diagnostics` holds at least one error.
    public var graph: Graph?
    public var diagnostics: [Diagnostic]
    /// The files read through `includes:`, so that their diagnostics can quote them.
    public var included: [SourceFile] = []

    public init(graph: Graph?, diagnostics: [Diagnostic]) {
        self.graph = graph
        self.diagnostics = diagnostics
    }

    public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }
    public var warnings: [Diagnostic] { diagnostics.filter { $0.severity == .warning } }
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// Loads, decodes and validates a graph file (DESIGN.md §2): YAML text ->
/// `YAMLNode` (MoonDocument) -> `Graph`. No I/O of its own: the caller
/// reads the file, and `files` reads what it includes and lists its globs.
public enum GraphLoader {
    /// Loads `source`. `overrides` (from `--set NAME=VALUE`) replace or add `vars`.
    public static func load(_ source: SourceFile, overrides: [String: String] = [:],
                            limits: YAMLLoader.Limits = YAMLLoader.Limits()) -> GraphLoadResult {
        load(source, overrides: overrides, limits: limits, files: .none)
    }

    /// Loads `source`, reading what it includes and globs through `files`.
    public static func load(_ source: SourceFile, overrides: [String: String] = [:],
                            limits: YAMLLoader.Limits = YAMLLoader.Limits(), files: GraphFileAccess) -> GraphLoadResult {
        let root: YAMLNode
        do {
            root = try YAMLLoader.load(source, limits: limits)
        } catch {
            return GraphLoadResult(graph: nil, diagnostics: error.items)
        }
        return decode(root, path: source.path, overrides: overrides, source: source, files: files)
    }

    /// Decodes an already loaded document (the file at `path`). With
    /// `source`, errors inside strings (expressions) point at their column.
    public static func decode(_ root: YAMLNode, path: String, overrides: [String: String] = [:],
                              source: SourceFile? = nil) -> GraphLoadResult {
        decode(root, path: path, overrides: overrides, source: source, files: .none)
    }

    /// Decodes `root`, reading what it includes and globs through `files`.
    public static func decode(_ root: YAMLNode, path: String, overrides: [String: String] = [:],
                              source: SourceFile? = nil, files: GraphFileAccess) -> GraphLoadResult {
        decode(root, path: path, overrides: overrides, source: source, files: files, budget: ExpansionBudget())
    }

    /// Decodes `root` within `budget` (smaller bounds than `ExpansionLimit`'s for tests).
    static func decode(_ root: YAMLNode, path: String, overrides: [String: String] = [:],
                       source: SourceFile? = nil, files: GraphFileAccess, budget: ExpansionBudget) -> GraphLoadResult {
        var decoder = GraphDecoder(path: path)
        guard let declaration = decoder.decode(root) else {
            return GraphLoadResult(graph: nil, diagnostics: sortedBySource(decoder.diagnostics))
        }
        budget.nodes = declaration.nodeNames.count
        var includes = IncludeLoader(files: files, budget: budget)
        let included = includes.load(declaration.includes, from: path, stack: [IncludeLoader.normalize(path)])
        var analyzer = GraphAnalyzer(source: source)
        let failed = decoder.values.hasErrors || includes.diagnostics.contains { $0.severity == .error }
        let graph = analyzer.analyze(declaration, overrides: overrides, decodingFailed: failed, files: files, included: included,
                                     budget: budget)
        // This file's problems in source order, then each included file's.
        let own = sortedBySource(decoder.diagnostics + analyzer.diagnostics)
        // A file included twice (under two names) reports its problems once.
        var seen: Set<Diagnostic> = []
        let fromIncludes = includes.diagnostics.filter { seen.insert($0).inserted }
        var result = GraphLoadResult(graph: graph, diagnostics: own + fromIncludes)
        result.included = includes.sources
        return result
    }

    /// Stable sort by position; diagnostics without a span come first.
    static func sortedBySource(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let ka = a.element.span.map { ($0.start.line, $0.start.column) } ?? (0, 0)
            let kb = b.element.span.map { ($0.start.line, $0.start.column) } ?? (0, 0)
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }
}
