import MoonDocument

/// A graph file read through `includes:`, analyzed on its own (its vars,
/// its expressions, its fan-out), to be merged under its name.
struct IncludedGraph {
    /// `lib`: its nodes become `lib:NAME`.
    var name: String
    var graph: Graph
    /// The included file's directory relative to the including file's ("." when the same).
    var directory: String
}

/// Reads the files of `includes:`, each relative to the file that
/// includes it, and their own includes in turn. An include cycle is an
/// error at the include that closes it, naming the whole chain; errors in
/// an included file carry its own path, line and column.
struct IncludeLoader {
    let files: GraphFileAccess
    let limits: YAMLLoader.Limits
    /// What the whole graph has expanded to so far, this file's nodes included.
    let budget: ExpansionBudget
    private(set) var diagnostics: [Diagnostic] = []
    /// Every file read, for diagnostics that quote it.
    private(set) var sources: [SourceFile] = []
    /// Included files are read at most this deep (a chain, not a cycle, of files).
    static let maxDepth = 32
    /// What includes parse in all, a file counting each time it is included:
    /// as much as one graph file may hold, so a few files that include a
    /// large one many times cannot make moon parse gigabytes.
    static let maxBytes = 64 << 20
    private var bytesParsed = 0
    /// Each distinct file's bytes, read from disk once however often it is included.
    private var read: [String: [UInt8]] = [:]

    init(files: GraphFileAccess, limits: YAMLLoader.Limits = YAMLLoader.Limits(), budget: ExpansionBudget = ExpansionBudget()) {
        self.files = files
        self.limits = limits
        self.budget = budget
    }

    /// The graphs `includes` name. `stack` holds the normalized paths of
    /// the files being read, the including file last.
    mutating func load(_ includes: [IncludeDeclaration], from path: String, stack: [String]) -> [IncludedGraph] {
        var result: [IncludedGraph] = []
        for include in includes {
            guard !budget.includesExhausted else { break }
            let joined = Self.normalize(Self.join(Graph.directory(of: path), include.file))
            if let start = stack.firstIndex(of: joined) {
                let chain = (stack[start...] + [joined]).joined(separator: " -> ")
                diagnostics.append(.error("include cycle: \(chain)", at: include.fileSpan,
                                          notes: ["help: a graph file cannot include itself, directly or through other files; remove one of these includes"]))
                continue
            }
            guard stack.count < Self.maxDepth else {
                diagnostics.append(.error("includes nest more than \(Self.maxDepth) files deep", at: include.fileSpan))
                continue
            }
            budget.includedFiles += 1
            guard budget.includedFiles <= budget.maxIncludedFiles else {
                refuse("includes read more than \(budget.maxIncludedFiles) files, a file counting each time it is included", at: include)
                break
            }
            if let graph = load(include, path: joined, stack: stack) {
                result.append(IncludedGraph(name: include.name, graph: graph, directory: Graph.directory(of: include.file)))
            }
        }
        return result
    }

    private mutating func load(_ include: IncludeDeclaration, path: String, stack: [String]) -> Graph? {
        let bytes: [UInt8]
        if let known = read[path] {
            bytes = known
        } else {
            switch files.read(path) {
            case .success(let got): bytes = got
            case .failure(let failure):
                diagnostics.append(.error("cannot read include '\(include.name)': \(failure.message)", at: include.fileSpan,
                                          notes: ["help: the path is relative to the including file's directory"]))
                return nil
            }
            read[path] = bytes
        }
        bytesParsed += bytes.count
        guard bytesParsed <= Self.maxBytes else {
            refuse("includes hold more than \(ByteSize.text(Int64(Self.maxBytes))) in all, a file counting each time it is included", at: include)
            return nil
        }
        let source = SourceFile(path: path, bytes: bytes)
        sources.append(source)
        let root: YAMLNode
        do {
            root = try YAMLLoader.load(source, limits: limits)
        } catch {
            diagnostics += error.items
            return nil
        }
        var decoder = GraphDecoder(path: path)
        guard let declaration = decoder.decode(root) else {
            diagnostics += decoder.diagnostics
            return nil
        }
        diagnostics += decoder.diagnostics
        budget.nodes += declaration.nodeNames.count
        guard budget.nodes <= budget.maxNodes else {
            refuse("the graph has more than \(budget.maxNodes) nodes once includes are merged", at: include)
            return nil
        }
        if !declaration.dotenv.isEmpty {
            diagnostics.append(.error("an included file cannot load 'dotenv'; load it in the main graph file", at: declaration.dotenv[0].span))
        }
        if let secret = declaration.secrets.first {
            diagnostics.append(.error("an included file cannot declare 'secrets'; declare them in the main graph file", at: secret.span))
        }
        var overrides: [String: String] = [:]
        // A list stays a list: each item one word where the included file uses it.
        var lists: [String: [String]] = [:]
        for entry in include.vars {
            guard declaration.vars[entry.name] != nil else {
                diagnostics.append(.error("include '\(include.name)' sets var '\(entry.name)', which \(path) does not declare\(Suggestion.clause(for: entry.name, in: declaration.vars.names))",
                                          at: include.nameSpan))
                continue
            }
            if let items = entry.items { lists[entry.name] = items } else { overrides[entry.name] = entry.value }
        }
        let nested = load(declaration.includes, from: path, stack: stack + [path])
        var analyzer = GraphAnalyzer(source: source)
        let graph = analyzer.analyze(declaration, overrides: overrides, listOverrides: lists, decodingFailed: decoder.values.hasErrors,
                                     files: files, included: nested, budget: budget, root: false)
        diagnostics += analyzer.diagnostics
        return graph
    }

    /// The error of a passed `ExpansionLimit`, at the include that passed
    /// it; nothing more is included after it.
    private mutating func refuse(_ message: String, at include: IncludeDeclaration) {
        budget.includesExhausted = true
        diagnostics.append(.error(message, at: include.fileSpan,
                                  notes: ["note: the bound keeps a few small files that include each other many times from growing without end",
                                          "help: each include reads its file again, with all that file includes; include shared files fewer times"]))
    }

    /// `directory/path`, or `path` when it is absolute or `directory` is `.`.
    static func join(_ directory: String, _ path: String) -> String {
        if path.hasPrefix("/") || directory == "." || directory.isEmpty { return path }
        if path.isEmpty || path == "." { return directory }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    /// `a/./b/../c` -> `a/c`, lexically (a leading `..` stays).
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
