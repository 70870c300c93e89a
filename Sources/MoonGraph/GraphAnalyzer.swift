import MoonDocument

/// The second stage of reading a graph file, after `GraphDecoder`: resolves
/// each node's `needs` to the nodes they name (unknown names with a
/// suggestion, a node needing itself, duplicates), finds dependency cycles,
/// checks every `${{ … }}` against the vars and needs it may read, and
/// warns about a `--set` of a var nothing declares or reads. The result is
/// the `Graph`, or nil when the file has errors; every problem is in
/// `diagnostics` either way. One file over 400 lines: its passes share the
/// diagnostics, the layout of the nodes and the suggestion budget.
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
    /// its vars, and `listOverrides` (an includer's list values); nil when
    /// it has errors, or when `decodingFailed`. `files` lists the files of
    /// `for-each` globs.
    mutating func analyze(_ declaration: consuming GraphDeclaration, overrides: [String: String],
                          listOverrides: [String: [String]] = [:], decodingFailed: Bool,
                          files: GraphFileAccess = .none, included: [IncludedGraph] = [],
                          budget: ExpansionBudget = ExpansionBudget(), root: Bool = true) -> Graph? {
        var vars = declaration.vars
        for name in overrides.keys.sorted() { vars[name] = overrides[name] }
        for name in listOverrides.keys.sorted() { vars.setList(name, listOverrides[name]!) }
        var resolver = VarResolver(vars: vars, literal: Set(overrides.keys).union(listOverrides.keys), declaration: declaration.varsValue,
                                   budget: budget)
        vars = resolver.resolve()
        diagnostics += resolver.diagnostics
        expressions = ExpressionChecker(source: source, vars: Set(vars.names), nodes: declaration.nodeNames)
        expressions.secrets = declaration.secrets.map(\.name)
        if let env = declaration.envValue { diagnostics += expressions.check(env: env, scope: .init(needs: nil, owner: "the graph's env")) }
        if let dir = declaration.defaultsDir { check(dir, scope: .init(needs: nil, owner: "defaults")) }

        // The templates are taken out of the declaration, so that the array
        // is not shared, and each is completed in place.
        var templates = declaration.nodes
        declaration.nodes = []
        // The included files' nodes come first, then this file's.
        var nodes: [Node] = []
        var layout = Layout()
        var queues = declaration.queues
        layout.failedIncludes = Set(declaration.includes.map(\.name)).subtracting(included.map(\.name))
        for include in included { IncludeMerger.merge(include, into: &nodes, names: &layout.names, index: &layout.index, ranges: &layout.ranges, queues: &queues) }
        var expander = FanOutExpander(vars: vars, files: files, directory: Graph.directory(of: declaration.path))
        layOut(templates, declaration.references, expander: &expander, into: &layout)
        diagnostics += expander.diagnostics
        var rootNeeds = RootNeeds(included: included)
        rootNeeds.add(templates, declaration.references, index: layout.index, ranges: layout.ranges)
        var barriers = Barriers(first: layout.names.count)
        let instanceNeeds = resolveNeeds(of: &templates, declaration.references, layout: layout, vars: vars, barriers: &barriers)
        let made = instantiate(templates, layout: layout, vars: vars, instanceNeeds: instanceNeeds)
        diagnostics += OutputCollisions.check(made: made, templates: templates, instances: layout.instances, references: declaration.references, included: nodes)
        if nodes.isEmpty { nodes = made } else { nodes += made }
        nodes += barriers.nodes
        if root {
            rootNeeds.resolve(into: &nodes, names: layout.names, index: layout.index, ranges: layout.ranges,
                              failedIncludes: layout.failedIncludes, diagnostics: &diagnostics)
        }
        findCycles(nodes)
        let defaultTargets = defaults(declaration.defaultTargets, layout: layout)

        let failed = decodingFailed || diagnostics.contains { $0.severity == .error }
        // Only for a graph without errors: a node with an error may not have
        // had its expressions read.
        if !failed { warnAboutUnusedOverrides(overrides, declared: declaration.vars.names) }
        guard !failed else { return nil }
        var graph = Graph(name: declaration.name, description: declaration.description, path: declaration.path,
                          vars: vars, env: declaration.env, queues: queues,
                          defaults: declaration.defaults, nodes: nodes)
        graph.dotenv = declaration.dotenv
        graph.cache = declaration.cache
        graph.secrets = declaration.secrets
        graph.defaultTargets = defaultTargets
        if !root { graph.rootNeeds = rootNeeds.pending }
        return graph
    }

    /// Resolves each template's needs (the per-instance ones are returned),
    /// checks its expressions against them and its dynamic fan-out; each
    /// diagnostic without a node names the template's.
    private mutating func resolveNeeds(of templates: inout [Node], _ references: [NodeReferences], layout: Layout,
                                       vars: Variables, barriers: inout Barriers) -> [[[Int]]?] {
        var instanceNeeds: [[[Int]]?] = Array(repeating: nil, count: templates.count)
        for (t, references) in references.enumerated() {
            let found = diagnostics.count
            let name = templates[t].name
            let resolved = needs(of: references, owner: name, instances: layout.instances[t], layout: layout, vars: vars,
                                 barriers: &barriers)
            templates[t].needs = resolved.needs
            instanceNeeds[t] = resolved.perInstance
            checkExpressions(of: references, node: templates[t], needs: resolved.readable, names: layout.names)
            if case .dynamic(let need, let key, let span) = references.fanOut {
                if let index = layout.index[need], templates[t].needs.contains(index) {
                    templates[t].fanOut = DynamicFanOut(need: index, key: key)
                } else {
                    error("node '\(name)' fans out over '\(need)', which is not one of its needs", at: span,
                          notes: ["help: add '\(need)' to its 'needs'"])
                }
            }
            for i in found..<diagnostics.count where diagnostics[i].node == nil { diagnostics[i].node = name }
        }
        return instanceNeeds
    }

    // MARK: - Instances

    /// Where every node of the graph will be: each template's instances
    /// (or the template itself) in file order, by name.
    struct Layout {
        var names: [String] = []
        var index: [String: Int] = [:]
        /// Per template: its instances, or nil when it is one node.
        var instances: [[NodeInstance]?] = []
        /// Template name -> the positions of its instances.
        var ranges: [String: Range<Int>] = [:]
        /// Includes whose file had errors: their nodes are not here.
        var failedIncludes: Set<String> = []
    }

    private func layOut(_ templates: [Node], _ references: [NodeReferences], expander: inout FanOutExpander, into layout: inout Layout) {
        layout.instances.reserveCapacity(templates.count)
        for t in templates.indices {
            let name = templates[t].name
            let start = layout.names.count
            if let fanOut = references[t].fanOut, let instances = expander.instances(of: name, fanOut) {
                layout.instances.append(instances)
                layout.names.reserveCapacity(start + instances.count)
                for instance in instances {
                    let name = instance.name
                    layout.index[name] = layout.names.count
                    layout.names.append(name)
                }
                layout.ranges[name] = start..<layout.names.count
            } else {
                layout.instances.append(nil)
                layout.index[name] = start
                layout.names.append(name)
            }
        }
    }

    /// The graph's nodes from its completed templates: each template's
    /// instances, or the template itself with `vars` put into its paths.
    /// A graph without fan-out or path expressions keeps the templates'
    /// array as it is, without copying a node.
    /// A path longer than `ExpansionLimit.varBytes` once filled in is an
    /// error at its node, found before the path is made.
    private mutating func instantiate(_ templates: [Node], layout: Layout, vars: Variables, instanceNeeds: [[[Int]]?]) -> [Node] {
        guard layout.instances.contains(where: { $0 != nil }) || templates.contains(where: \.hasPathExpressions) else { return templates }
        var nodes: [Node] = []
        nodes.reserveCapacity(layout.names.count)
        for (t, template) in templates.enumerated() {
            if layout.instances[t] != nil || template.hasPathExpressions {
                let parsed = NodeTemplate(template)
                let instances: [NodeInstance?] = layout.instances[t]?.map { $0 } ?? [nil]
                for (i, instance) in instances.enumerated() {
                    guard parsed.longestPath(instance, vars: vars) <= ExpansionLimit.varBytes else {
                        error("a path of node '\(instance?.name ?? template.name)' (sources, generates or depfile) is longer than \(ByteSize.text(Int64(ExpansionLimit.varBytes))) once vars, item and matrix are put in",
                              at: template.nameSpan, notes: ["help: a path repeats each value it reads; read a long var in run or with instead"])
                        return nodes
                    }
                    var node = parsed.instantiated(instance, vars: vars)
                    if let needs = instanceNeeds[t] { node.needs = needs[i] }
                    nodes.append(node)
                }
            } else {
                nodes.append(template)
            }
        }
        return nodes
    }

    /// `default:`: each name a node or a template.
    private mutating func defaults(_ targets: [NodeReferences.Need], layout: Layout) -> [String] {
        var result: [String] = []
        for target in targets {
            if layout.index[target.name] != nil || layout.ranges[target.name] != nil {
                result.append(target.name)
            } else {
                let candidates = layout.ranges.keys.sorted() + layout.names
                error("default names unknown node '\(target.name)'\(suggestion(for: target.name, in: candidates))", at: target.span,
                      notes: ["help: name a node under `nodes:`, or a for-each or matrix node for all its instances"])
            }
        }
        return result
    }

    // MARK: - Needs

    /// A node's resolved needs.
    struct ResolvedNeeds {
        /// The needs every instance shares (all of a node's, without fan-out).
        var needs: [Int] = []
        /// Per instance, when its needs differ (`text[${{ item }}]`): the
        /// shared needs, then its own.
        var perInstance: [[Int]]?
        /// What its expressions may read (`needs.NODE…`): each node named,
        /// a template's instances, not the barrier standing for them.
        var readable: [Int] = []
    }

    /// The barriers of a graph, one per template a fan-out needs whole,
    /// placed after every node of the file.
    struct Barriers {
        let first: Int
        var index: [String: Int] = [:]
        var nodes: [Node] = []

        init(first: Int) { self.first = first }

        mutating func barrier(for template: String, instances: Range<Int>, span: SourceSpan) -> Int {
            if let index = index[template] { return index }
            var node = Node(name: template, nameSpan: span, needs: Array(instances), action: .group)
            node.isInternal = true
            node.isBarrier = true
            let position = first + nodes.count
            nodes.append(node)
            index[template] = position
            return position
        }
    }

    /// The indices of the nodes `owner` needs, in the order written (a
    /// template's name stands for all its instances, through one barrier
    /// when `owner` is itself a fan-out), without unknown names, itself or
    /// duplicates (each one a diagnostic). A need with `${{ … }}` is made
    /// per instance from its item, matrix values and vars.
    private mutating func needs(of references: NodeReferences, owner name: String, instances: [NodeInstance]?, layout: Layout,
                                vars: Variables, barriers: inout Barriers) -> ResolvedNeeds {
        // Duplicates found by a scan of what is kept while the list is
        // short (most are), a set beyond that.
        var seen: Set<Int> = []
        var result = ResolvedNeeds()
        result.readable.reserveCapacity(references.needs.count)
        // (Most graphs have no fan-out: no template names to look up then.)
        let own = layout.ranges.isEmpty ? nil : layout.ranges[name]
        // A fan-out needing a whole template would give each of its N
        // instances the template's M instances: one barrier between them instead.
        let isFanOut = (instances?.count ?? 0) > 1
        var made: [Int] = []
        // By position: a `Need` is copied only for a message.
        for n in references.needs.indices {
            let needName = references.needs[n].name
            if Template.containsExpression(needName) {
                made.append(n)
                continue
            }
            // A template's instances are consecutive, so every need is a range of nodes.
            let targets: Range<Int>
            if !layout.ranges.isEmpty, let range = layout.ranges[needName] {
                targets = range
            } else if let target = layout.index[needName] {
                targets = target..<target + 1
            } else {
                unknownNeed(references.needs[n], owner: name, layout: layout)
                continue
            }
            if target(targets, isOwn: own, name: name, needName: needName) {
                error("node '\(name)' needs itself; remove '\(needName)' from its needs", at: references.needs[n].span)
                continue
            }
            var duplicate = false
            for target in targets {
                duplicate = result.readable.count <= 32 ? result.readable.contains(target) : !seen.insert(target).inserted
                guard !duplicate else {
                    diagnostics.append(Diagnostic(.warning, "node '\(name)' needs '\(needName)' more than once; remove the duplicate",
                                                  at: references.needs[n].span))
                    break
                }
                if result.readable.count == 32 { seen = Set(result.readable) }
                result.readable.append(target)
            }
            if duplicate { continue }
            if isFanOut && targets.count > 1 && layout.ranges[needName] != nil {
                result.needs.append(barriers.barrier(for: needName, instances: targets, span: references.needs[n].span))
            } else {
                result.needs += targets
            }
        }
        if !made.isEmpty {
            madeNeeds(made.map { references.needs[$0] }, references: references, owner: name, instances: instances,
                      layout: layout, vars: vars, barriers: &barriers, into: &result)
        }
        return result
    }

    /// The needs written with `${{ … }}` (`text[${{ item }}]`), made for
    /// each instance of `owner` (or once, for a node without fan-out) from
    /// its item, matrix values and vars; each must name a node or a template.
    private mutating func madeNeeds(_ written: [NodeReferences.Need], references: NodeReferences, owner name: String,
                                    instances: [NodeInstance]?, layout: Layout, vars: Variables,
                                    barriers: inout Barriers, into result: inout ResolvedNeeds) {
        var scope = ExpressionChecker.Scope(needs: [], names: layout.names, node: name)
        scope.staticKey = "needs"
        switch references.fanOut {
        case .list, .glob: scope.forEach = true
        case .matrix(let matrix): scope.matrixKeys = matrix.allKeys
        case .dynamic(_, _, let span):
            error("node '\(name)' makes needs from its item, but its items are known only at run time", at: span,
                  notes: ["help: a need from ${{ item }} is for a for-each over a list or a glob, or a matrix: name the need in full"])
            return
        case nil: break
        }
        var templates: [Template] = []
        for need in written {
            let found = diagnostics.count
            diagnostics += expressions.check(need.node, scope: scope)
            guard diagnostics.count == found else { return }
            templates.append(Template.parse(need.name).template)
        }
        let isFanOut = (instances?.count ?? 0) > 1
        let all: [NodeInstance?] = instances.map { $0.map { $0 } } ?? [nil]
        var perInstance: [[Int]] = []
        perInstance.reserveCapacity(all.count)
        for instance in all {
            var needs = result.needs
            for (w, template) in templates.enumerated() {
                let needName = NodeTemplate.render(template, instance: instance, vars: vars, pattern: false)
                let owner = instance?.name ?? name
                let targets: Range<Int>
                if !layout.ranges.isEmpty, let range = layout.ranges[needName] {
                    targets = range
                } else if let target = layout.index[needName] {
                    targets = target..<target + 1
                } else {
                    missingNeed(written[w], made: needName, owner: owner, layout: layout)
                    return
                }
                if needName == name || layout.index[owner].map(targets.contains) == true {
                    error("node '\(owner)' needs itself ('\(written[w].name)' is '\(needName)')", at: written[w].span,
                          notes: ["help: a made need names another node, such as the instance of another template for the same item"])
                    return
                }
                if isFanOut && targets.count > 1 {
                    let barrier = barriers.barrier(for: needName, instances: targets, span: written[w].span)
                    if !needs.contains(barrier) { needs.append(barrier) }
                } else {
                    for target in targets where !needs.contains(target) { needs.append(target) }
                }
            }
            perInstance.append(needs)
        }
        // One node's made needs are its needs, which its expressions may read.
        if instances == nil { result.needs = perInstance[0]; result.readable = perInstance[0] } else { result.perInstance = perInstance }
    }

    /// A need made from an instance's values names no node: say which, and what the template has.
    private mutating func missingNeed(_ need: NodeReferences.Need, made: String, owner: String, layout: Layout) {
        var notes: [String] = []
        if let bracket = made.firstIndex(of: "["), made.hasSuffix("]"), let range = layout.ranges[String(made[..<bracket])] {
            let template = String(made[..<bracket])
            let shown = range.prefix(5).map { layout.names[$0] }.joined(separator: ", ")
            let more = range.count > 5 ? ", … (\(range.count) in all)" : ""
            notes.append("help: '\(template)' has the instances \(range.isEmpty ? "(none)" : shown + more); "
                         + "each instance of '\(owner.split(separator: "[").first ?? "")' must find its own")
        } else {
            notes.append("help: '\(need.name)' must name a node, or an instance of a for-each or matrix node, for every instance")
        }
        error("node '\(owner)' needs unknown node '\(made)' (made from '\(need.name)')", at: need.span, notes: notes)
    }

    /// Whether a need names its own node (or, for a template, one of its instances).
    private func target(_ targets: Range<Int>, isOwn own: Range<Int>?, name: String, needName: String) -> Bool {
        needName == name || own?.overlaps(targets) == true
    }

    private mutating func unknownNeed(_ need: NodeReferences.Need, owner name: String, layout: Layout) {
        // A node of an include that could not be read: that error says it.
        if let colon = need.name.firstIndex(of: ":"), layout.failedIncludes.contains(String(need.name[..<colon])) { return }
        // `obj[x]` of a template `obj`: name the instances it has.
        if let bracket = need.name.firstIndex(of: "["), need.name.hasSuffix("]") {
            let template = String(need.name[..<bracket])
            if let range = layout.ranges[template] {
                let shown = range.prefix(5).map { layout.names[$0] }.joined(separator: ", ")
                let more = range.count > 5 ? ", … (\(range.count) in all)" : ""
                error("node '\(name)' needs unknown node '\(need.name)'", at: need.span,
                      notes: ["help: '\(template)' has the instances \(range.isEmpty ? "(none)" : shown + more); write '\(template)' for all of them"])
                return
            }
        }
        // Template names first: `obj` is likelier meant than `obj[a.c]`.
        let hint = suggestion(for: need.name, in: layout.ranges.isEmpty ? layout.names : layout.ranges.keys.sorted() + layout.names)
        // Without a near name to suggest, say how to fix it.
        let help = hint.isEmpty ? ["help: add a node '\(need.name)' under `nodes:`, or remove it from the needs of '\(name)'"] : []
        error("node '\(name)' needs unknown node '\(need.name)'\(hint)", at: need.span, notes: help)
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
    private mutating func checkExpressions(of references: NodeReferences, node: Node, needs: [Int], names: [String]) {
        var scope = ExpressionChecker.Scope(needs: needs, names: names, node: node.name)
        switch references.fanOut {
        case .list, .glob, .dynamic: scope.forEach = true
        case .matrix(let matrix): scope.matrixKeys = matrix.allKeys
        case nil: break
        }
        scope.params = node.params.map(\.name)
        var paths = scope
        for (key, value) in [("sources", references.sources), ("generates", references.generates), ("depfile", references.depfile)] {
            guard let value else { continue }
            paths.staticKey = key
            if case .sequence(let items) = value.kind { for item in items { check(item, scope: paths) } } else { check(value, scope: paths) }
        }
        if let run = references.run, case .shell = node.action {
            check(run, scope: scope, shell: node.shell)
        } else if let run = references.run {
            diagnostics += expressions.check(exec: run, scope: scope)
        }
        if let env = references.env { diagnostics += expressions.check(env: env, scope: scope) }
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
