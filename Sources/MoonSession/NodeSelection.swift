import MoonDocument
import MoonGraph

/// The words after FILE read against the graph: node names, fan-out names
/// (every instance), quoted globs over them (`test[*]`, `lib:*`), a node's
/// `NAME=VALUE` parameters after it, the words after `--` for the last node
/// named, and `--exclude` patterns taken out. Without a name: the graph's
/// `default:`, else every node. `internal:` nodes are never selected by name
/// or pattern; they run when a selected node needs them.
package struct NodeSelection {
    /// The nodes to plan, by name; empty for every node of the graph.
    package var targets: [String]
    /// Nodes `--exclude` took out of the selection, by index.
    package var excluded: [Int] = []
    /// `NAME=VALUE`s and `--` words by node index, for `Graph.bind`.
    package var given: [Int: (params: [String: String], args: [String])] = [:]
    /// Whether the command line named nodes (else the default or every node is selected).
    package var named = false

    /// Every problem at once, as diagnostics without a location (the
    /// command line has none), so they print as the graph's own do.
    package static func make(names words: [String], passthrough: [String] = [], exclude: [String],
                     graph: Graph) throws(Diagnostics) -> NodeSelection {
        var problems: [Diagnostic] = []
        var selection = NodeSelection(targets: [])
        var last: [Int] = []
        for word in words {
            do throws(SelectionError) {
                if let eq = word.firstIndex(of: "="), !NamePattern.isPattern(word) {
                    guard !last.isEmpty else {
                        throw SelectionError("'\(word)' sets a parameter, so it comes after the node it is for: moon run NODE \(word)")
                    }
                    for index in last { selection.given[index, default: ([:], [])].params[String(word[..<eq])] = String(word[word.index(after: eq)...]) }
                    continue
                }
                last = try resolve(word, in: graph)
                selection.targets += last.map { graph.nodes[$0].name }
            } catch {
                problems.append(.error(error.message, at: nil))
            }
        }
        if !passthrough.isEmpty {
            if last.isEmpty {
                problems.append(.error("the words after '--' (\(passthrough.joined(separator: " "))) are a node's ${{ args }}; "
                    + "name the node before '--': moon run NODE -- WORDS", at: nil))
            }
            for index in last { selection.given[index, default: ([:], [])].args = passthrough }
        }
        let named = !words.isEmpty
        selection.named = named
        if !named {
            selection.targets = graph.defaultTargets.flatMap { graph.targets(named: $0).map { $0.map { graph.nodes[$0].name } } ?? [$0] }
            if selection.targets.isEmpty && (!exclude.isEmpty || graph.nodes.contains(where: \.isInternal)) {
                selection.targets = graph.nodes.filter { !$0.isInternal }.map(\.name)
            }
        }
        if !exclude.isEmpty {
            var excluded = Set<Int>()
            for pattern in exclude {
                let matches = NamePattern.isPattern(pattern) ? graph.nodes(matching: pattern)
                    : (graph.targets(named: pattern) ?? []).filter { !graph.nodes[$0].isInternal }
                if matches.isEmpty {
                    problems.append(.error("--exclude '\(pattern)' matches no node\(suggestion(for: pattern, in: graph))", at: nil))
                }
                excluded.formUnion(matches)
            }
            let names = Set(excluded.map { graph.nodes[$0].name })
            selection.targets.removeAll { names.contains($0) }
            selection.excluded = excluded.sorted()
            if selection.targets.isEmpty && problems.isEmpty {
                problems.append(.error("nothing left to run: --exclude took out every node \(named ? "named" : "of the graph")", at: nil))
            }
        }
        guard problems.isEmpty else { throw Diagnostics(problems) }
        return selection
    }

    /// `graph` with every node of `plan` that takes parameters or was given
    /// `--` words bound (`Graph.bind`): values given, else defaults. With
    /// `requireAll` false (`moon graph`, `moon status`: they show, they do
    /// not run), a missing required parameter is left unbound.
    package func bound(_ graph: Graph, plan: Plan, requireAll: Bool) throws(Diagnostics) -> Graph {
        var graph = graph
        var problems: [Diagnostic] = []
        for index in plan.selected where !graph.nodes[index].params.isEmpty || given[index] != nil {
            let values = given[index] ?? ([:], [])
            do {
                try graph.bind(node: index, params: values.params, args: values.args)
            } catch {
                let declared = Set(graph.nodes[index].params.map(\.name))
                guard requireAll || !values.params.keys.allSatisfy(declared.contains) else { continue }
                // Selected without being named: leaving it out is the other way.
                let notes = named ? [] : ["help: or leave it out: --exclude \(graph.nodes[index].name)"]
                problems.append(.error(error.message, at: nil, notes: notes))
            }
        }
        guard problems.isEmpty else { throw Diagnostics(problems) }
        return graph
    }

    /// Whether binding has anything to do for `graph`.
    package func needsBinding(_ graph: Graph) -> Bool {
        !given.isEmpty || graph.nodes.contains { !$0.params.isEmpty }
    }

    /// What to say about the plan: each excluded node that runs anyway, and why.
    package func notes(for plan: Plan) -> [String] {
        excluded.filter(plan.isSelected).compactMap { index in
            let name = plan.graph.nodes[index].name
            guard let user = plan.selected.first(where: { plan.graph.nodes[$0].needs.contains(index) }) else { return nil }
            return "\(name) is excluded but runs: \(plan.graph.nodes[user].name) needs it"
        }
    }

    package struct SelectionError: Error {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    /// The nodes `word` stands for: a node, every instance of a fan-out, or
    /// every selectable node a pattern matches.
    private static func resolve(_ word: String, in graph: Graph) throws(SelectionError) -> [Int] {
        if NamePattern.isPattern(word) {
            let matches = graph.nodes(matching: word)
            if matches.isEmpty { throw SelectionError("no node matches '\(word)'\(suggestion(for: word, in: graph))") }
            return matches
        }
        guard let indices = graph.targets(named: word) else {
            throw SelectionError("unknown node '\(word)'\(suggestion(for: word, in: graph))")
        }
        if indices.count == 1, graph.nodes[indices[0]].isInternal {
            throw SelectionError("node '\(word)' is internal: it runs when a node that needs it runs, "
                + "and cannot be named on the command line (`moon list` shows the nodes that can)")
        }
        return indices.filter { !graph.nodes[$0].isInternal }
    }

    /// Every name the command line may select, in file order, a fan-out's
    /// name before its first instance; internal nodes are left out.
    package static func selectableNames(in graph: Graph) -> [String] {
        var names: [String] = []
        var templates = Set<String>()
        for node in graph.nodes where !node.isInternal {
            if let template = node.instance?.template, templates.insert(template).inserted { names.append(template) }
            names.append(node.name)
        }
        return names
    }

    /// ` (did you mean 'x'?)` for a name or a pattern: a pattern is compared
    /// with names by the part before its first `[`, `*` or `?`, and keeps its rest.
    package static func suggestion(for word: String, in graph: Graph) -> String {
        let names = selectableNames(in: graph)
        let cut = word.firstIndex { $0 == "[" || $0 == "*" || $0 == "?" } ?? word.endIndex
        let stem = String(word[..<cut]), rest = String(word[cut...])
        if rest.isEmpty {
            return Suggestion.closest(to: word, in: names).map { " (did you mean '\($0)'?)" } ?? ""
        }
        guard !stem.isEmpty else { return "" }
        // `tset[*]` is compared with the names before their `[`; `lbi-*` with as many first characters of each name.
        let stems = names.map { name in
            rest.hasPrefix("[") ? String(name[..<(name.firstIndex(of: "[") ?? name.endIndex)]) : String(name.prefix(stem.count))
        }
        var seen = Set<String>()
        var candidates = stems.filter { seen.insert($0).inserted }
        // The closest stem may not have what the rest asks for (`b[]` when
        // `b` is no fan-out): the suggestion is only ever a word that selects nodes.
        for _ in 0..<3 {
            guard let closest = Suggestion.closest(to: stem, in: candidates) else { return "" }
            let word = closest + rest
            let selects = NamePattern.isPattern(word) ? !graph.nodes(matching: word).isEmpty : graph.targets(named: word) != nil
            if selects { return " (did you mean '\(word)'?)" }
            candidates.removeAll { $0 == closest }
        }
        return ""
    }
}
