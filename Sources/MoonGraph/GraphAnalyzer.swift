import MoonDocument

/// The second stage of reading a graph file, after `GraphDecoder`: resolves
/// each node's `needs` to the nodes they name (unknown names with a
/// suggestion, a node needing itself, duplicates), finds dependency cycles,
/// checks every `${{ … }}` against the vars and needs it may read, and
/// warns about a `--set` of a var nothing declares or reads. The result is
/// the `Graph`, or nil when the file has errors; every problem is in
/// `diagnostics` either way.
struct GraphAnalyzer {
    private(set) var diagnostics: [Diagnostic] = []
    private let source: SourceFile?
    private var expressions: ExpressionChecker
    /// Suggestions for unknown needs are bounded as the decoder's are (`ValueDecoding`).
    private var suggestionBudget = 200_000

    /// `source`, the file's text when known, lets expression errors point inside strings.
    init(source: SourceFile?) {
        self.source = source
        self.expressions = ExpressionChecker(source: source, vars: [], nodes: [])
    }

    /// The graph `declaration` describes, with `overrides` (`--set`) over
    /// its vars; nil when it has errors, or when `decodingFailed`.
    mutating func analyze(_ declaration: consuming GraphDeclaration, overrides: [String: String], decodingFailed: Bool) -> Graph? {
        var vars = declaration.vars
        for name in overrides.keys.sorted() { vars[name] = overrides[name] }
        expressions = ExpressionChecker(source: source, vars: Set(vars.names), nodes: declaration.nodeNames)
        if let env = declaration.envValue { checkValues(of: env, scope: .init(needs: nil, owner: "the graph's env")) }
        if let dir = declaration.defaultsDir { check(dir, scope: .init(needs: nil, owner: "defaults")) }

        // The nodes are completed in place: taken out of the declaration, so
        // that the array is not shared and not copied.
        var nodes = declaration.nodes
        declaration.nodes = []
        let names = nodes.map(\.name)
        for (index, references) in declaration.references.enumerated() {
            let found = diagnostics.count
            nodes[index].needs = needs(of: references, node: index, names: names, nodeIndex: declaration.nodeIndex)
            checkExpressions(of: references, node: nodes[index], names: names)
            for i in found..<diagnostics.count { diagnostics[i].node = names[index] }
        }
        findCycles(nodes)

        let failed = decodingFailed || diagnostics.contains { $0.severity == .error }
        // Only for a graph without errors: a node with an error may not have
        // had its expressions read.
        if !failed { warnAboutUnusedOverrides(overrides, declared: declaration.vars.names) }
        guard !failed else { return nil }
        var graph = Graph(name: declaration.name, description: declaration.description, path: declaration.path,
                          vars: vars, env: declaration.env, queues: declaration.queues,
                          defaults: declaration.defaults, nodes: nodes)
        graph.dotenv = declaration.dotenv
        graph.cache = declaration.cache
        return graph
    }

    // MARK: - Needs

    /// The indices of the nodes node `index` needs, in the order written,
    /// without unknown names, itself or duplicates (each one a diagnostic).
    private mutating func needs(of references: NodeReferences, node index: Int, names: [String], nodeIndex: [String: Int]) -> [Int] {
        let name = names[index]
        // Duplicates found by a scan of what is kept while the list is
        // short (most are), a set beyond that.
        var seen: Set<Int> = []
        var needs: [Int] = []
        needs.reserveCapacity(references.needs.count)
        for need in references.needs {
            guard let target = nodeIndex[need.name] else {
                let hint = suggestion(for: need.name, in: names)
                // Without a near name to suggest, say how to fix it.
                let help = hint.isEmpty ? ["help: add a node '\(need.name)' under `nodes:`, or remove it from the needs of '\(name)'"] : []
                error("node '\(name)' needs unknown node '\(need.name)'\(hint)", at: need.span, notes: help)
                continue
            }
            if target == index {
                error("node '\(name)' needs itself; remove '\(need.name)' from its needs", at: need.span)
                continue
            }
            let duplicate = references.needs.count <= 32 ? needs.contains(target) : !seen.insert(target).inserted
            guard !duplicate else {
                diagnostics.append(Diagnostic(.warning, "node '\(name)' needs '\(need.name)' more than once; remove the duplicate",
                                              at: need.span))
                continue
            }
            needs.append(target)
        }
        return needs
    }

    private mutating func findCycles(_ nodes: [Node]) {
        for cycle in CycleFinder.cycles(successors: nodes.map(\.needs)) {
            let names = cycle.map { nodes[$0].name }
            error("dependency cycle: \(Self.cyclePath(names))", at: nodes[cycle[0]].nameSpan,
                  notes: ["help: a node cannot need itself, directly or through other nodes; remove one of these needs"])
        }
    }

    /// `a -> b -> c -> a`; a cycle of more than 20 nodes shows its ends and how many it skips.
    static func cyclePath(_ names: [String]) -> String {
        var shown = names
        if names.count > 20 {
            shown = Array(names.prefix(10)) + ["… (\(names.count - 18) more)"] + Array(names.suffix(8))
        }
        return (shown + [names[0]]).joined(separator: " -> ")
    }

    // MARK: - Expressions

    /// The node's `${{ … }}`, which may read its direct needs; a shell-form
    /// `run` is checked with its shell's quoting.
    private mutating func checkExpressions(of references: NodeReferences, node: Node, names: [String]) {
        let scope = ExpressionChecker.Scope(needs: node.needs.map { names[$0] }, owner: "node '\(node.name)'")
        if let run = references.run, case .shell = node.action {
            check(run, scope: scope, shell: node.shell)
        } else if let run = references.run {
            checkValues(of: run, scope: scope)
        }
        if let env = references.env { checkValues(of: env, scope: scope) }
        if let with = references.with { checkValues(of: with, scope: scope) }
        if let dir = references.dir { check(dir, scope: scope) }
    }

    private mutating func check(_ node: YAMLNode, scope: ExpressionChecker.Scope, shell: Shell? = nil) {
        diagnostics += expressions.check(node, scope: scope, shell: shell)
    }

    /// Checks the values of a mapping (`env:`, `with:`) or the items of a list (exec-form `run`).
    private mutating func checkValues(of node: YAMLNode, scope: ExpressionChecker.Scope) {
        switch node.kind {
        case .mapping(let pairs): for pair in pairs { check(pair.value, scope: scope) }
        case .sequence(let items): for item in items { check(item, scope: scope) }
        case .scalar: break
        }
    }

    // MARK: - --set

    /// A `--set` of a var that is neither declared nor read is most likely a typo.
    private mutating func warnAboutUnusedOverrides(_ overrides: [String: String], declared: [String]) {
        let known = Set(declared).union(expressions.usedVars).sorted()
        for name in overrides.keys.sorted() where !declared.contains(name) && !expressions.usedVars.contains(name) {
            let hint = Suggestion.clause(for: name, in: known)
            diagnostics.append(Diagnostic(.warning, "--set \(name): no var '\(name)' is declared or read in this graph\(hint)", at: nil,
                                          notes: hint.isEmpty ? ["help: vars are declared under 'vars:' and read as ${{ vars.NAME }} in run, env, with and dir"] : []))
        }
    }

    // MARK: - Helpers

    private mutating func suggestion(for word: String, in candidates: [String]) -> String {
        guard suggestionBudget > 0 else { return "" }
        suggestionBudget -= max(candidates.count, 1)
        return Suggestion.clause(for: word, in: candidates)
    }

    private mutating func error(_ message: String, at span: SourceSpan?, notes: [String] = []) {
        diagnostics.append(Diagnostic(.error, message, at: span, notes: notes))
    }
}
