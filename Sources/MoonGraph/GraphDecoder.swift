import MoonCommand
import MoonDocument

/// Decodes a loaded YAML tree into a validated `Graph`, collecting every
/// problem (not only the first) as a `Diagnostic` at the span the user must
/// fix. No I/O. Linear in the size of the file: names are looked up in
/// dictionaries, and the cycle check is an iterative Tarjan.
struct GraphDecoder {
    let path: String
    /// The file's text, when known, so expression errors point inside strings.
    let source: SourceFile?
    var diagnostics: [Diagnostic] = []
    /// Checks `${{ … }}`; set up once vars and node names are known.
    private var expressions = ExpressionChecker(source: nil, vars: [], nodes: [])
    /// Suggestions cost a scan of every candidate, so one file's scans are
    /// bounded by the candidates they compare: a hostile file with thousands
    /// of unknown names among thousands of nodes gets the first ones with
    /// suggestions and the rest without, in time linear in its size.
    private var suggestionBudget = 200_000

    init(path: String, source: SourceFile? = nil) {
        self.path = path
        self.source = source
    }

    // MARK: - The file

    mutating func decode(_ root: YAMLNode, overrides: [String: String]) -> Graph? {
        guard let top = mapping(root, expecting: "a mapping of graph settings (version, nodes, …) at the top of the file") else {
            return nil
        }
        let keys = checkKeys(top, allowed: GraphKeys.top, context: "at the top level", ignoringPrefix: "x-")
        let rootStart = SourceSpan(file: root.span.file, start: root.span.start, end: root.span.start)

        // version
        if let version = keys["version"] {
            let value = version.value
            if case .scalar(let text, _, _) = value.kind, !value.isNull {
                if text != "1" {
                    error("unsupported version '\(text)'; this moon reads 'version: 1'", at: value.span)
                }
            } else {
                error("expected 'version: 1', found \(describe(value))", at: value.span)
            }
        } else {
            error("missing 'version'; add 'version: 1' at the top of the file", at: rootStart)
        }

        let name = keys["name"].flatMap { string($0.value, expecting: "a graph name") } ?? Graph.stem(of: path)
        let description = keys["description"].flatMap { string($0.value, expecting: "a description") }
        var vars = keys["vars"].map { variables($0.value, what: "variable", nameRule: .variable) } ?? Variables()
        let declared = vars.names
        for name in overrides.keys.sorted() { vars[name] = overrides[name] }
        let env = keys["env"].map { variables($0.value, what: "environment variable", nameRule: .environment) } ?? Variables()
        let dotenv = keys["dotenv"].map { decodeDotenv($0.value) } ?? []
        expressions = ExpressionChecker(source: source, vars: Set(vars.names), nodes: Self.nodeNames(keys["nodes"]?.value))
        if let e = keys["env"] { checkValues(of: e.value, scope: .init(needs: nil, owner: "the graph's env")) }
        if let d = keys["defaults"]?.value.pairs?.first(where: { $0.key.scalar == "dir" }) {
            check(d.value, scope: .init(needs: nil, owner: "defaults"))
        }
        let queues = keys["queues"].map { decodeQueues($0.value) } ?? [QueueSpec(name: QueueSpec.defaultName)]
        let defaults = keys["defaults"].map { decodeDefaults($0.value, queues: queues) } ?? NodeDefaults()

        var nodes: [Node] = []
        if let nodesPair = keys["nodes"] {
            nodes = decodeNodes(nodesPair, queues: queues, defaults: defaults)
        } else {
            error("missing 'nodes'; add a 'nodes:' mapping of node names to nodes", at: rootStart)
        }

        findCycles(nodes)
        // Only for a graph without errors: a node with an error may not have
        // had its expressions read.
        if !diagnostics.contains(where: { $0.severity == .error }) {
            let known = Set(declared).union(expressions.usedVars).sorted()
            for name in overrides.keys.sorted() where !declared.contains(name) && !expressions.usedVars.contains(name) {
                let hint = Suggestion.clause(for: name, in: known)
                warning("--set \(name): no var '\(name)' is declared or read in this graph\(hint)", at: nil,
                        notes: hint.isEmpty ? ["help: vars are declared under 'vars:' and read as ${{ vars.NAME }} in run, env, with and dir"] : [])
            }
        }

        guard !diagnostics.contains(where: { $0.severity == .error }) else { return nil }
        var graph = Graph(name: name, description: description, path: path, vars: vars, env: env,
                          queues: queues, defaults: defaults, nodes: nodes)
        graph.dotenv = dotenv
        return graph
    }

    // MARK: - Expressions and dotenv

    /// The names under `nodes:`, for messages about expressions (validation happens later).
    private static func nodeNames(_ nodes: YAMLNode?) -> [String] {
        nodes?.pairs?.compactMap(\.key.scalar) ?? []
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

    /// `dotenv: .env`, or a list of paths and `{path, optional}` mappings.
    private mutating func decodeDotenv(_ node: YAMLNode) -> [DotenvFile] {
        if node.isNull { return [] }
        let items: [YAMLNode]
        switch node.kind {
        case .scalar, .mapping: items = [node]
        case .sequence(let list): items = list
        }
        var files: [DotenvFile] = []
        for item in items {
            if let pairs = item.pairs {
                let keys = checkKeys(pairs, allowed: GraphKeys.dotenv, context: "in a dotenv entry")
                guard let p = keys["path"], let path = string(p.value, expecting: "the path of a dotenv file", allowNull: false) else {
                    if keys["path"] == nil { error("a dotenv entry needs 'path'", at: item.span) }
                    continue
                }
                let optional = keys["optional"].flatMap { bool($0.value, key: "optional") } ?? false
                if path.isEmpty { error("the path of a dotenv file is empty", at: p.value.span); continue }
                files.append(DotenvFile(path: path, optional: optional, span: p.value.span))
            } else if let path = string(item, expecting: "the path of a dotenv file, or {path, optional}", allowNull: false) {
                if path.isEmpty { error("the path of a dotenv file is empty", at: item.span); continue }
                files.append(DotenvFile(path: path, optional: false, span: item.span))
            }
        }
        return files
    }

    // MARK: - Queues and defaults

    private mutating func decodeQueues(_ node: YAMLNode) -> [QueueSpec] {
        var queues = [QueueSpec(name: QueueSpec.defaultName)]
        if node.isNull { return queues }
        guard let pairs = mapping(node, expecting: "a mapping of queue names to queues") else { return queues }
        var seen: Set<String> = []
        for pair in pairs {
            guard let name = keyName(pair.key) else { continue }
            guard Node.isValidName(name) else {
                error("invalid queue name '\(name)'; \(Self.nameRule)", at: pair.key.span)
                continue
            }
            guard seen.insert(name).inserted else {
                error("queue '\(name)' is defined twice; remove one", at: pair.key.span)
                continue
            }
            var queue = QueueSpec(name: name, span: pair.key.span)
            if !pair.value.isNull, let body = mapping(pair.value, expecting: "a mapping with concurrency, executor or slurm") {
                let keys = checkKeys(body, allowed: GraphKeys.queue, context: "in queue '\(name)'")
                if let c = keys["concurrency"], !c.value.isNull {
                    if case .scalar(let text, _, _) = c.value.kind, text == "auto" {
                        queue.concurrency = .auto
                    } else if let n = integer(c.value), n > 0 {
                        queue.concurrency = .fixed(n)
                    } else {
                        error("invalid concurrency \(describe(c.value)) for queue '\(name)'; write a positive integer or 'auto'", at: c.value.span)
                    }
                }
                var slurm: SlurmOptions?
                if let s = keys["slurm"], !s.value.isNull {
                    slurm = decodeSlurm(s.value)
                }
                if let e = keys["executor"], !e.value.isNull {
                    switch word(e.value, choices: ["local", "slurm"], what: "executor") {
                    case "slurm": queue.executor = .slurm(slurm ?? SlurmOptions())
                    case "local":
                        if slurm != nil, let s = keys["slurm"] {
                            error("queue '\(name)' has 'slurm' options but runs locally; set 'executor: slurm' or remove them", at: s.key.span)
                        }
                    default: break
                    }
                } else if slurm != nil, let s = keys["slurm"] {
                    error("queue '\(name)' has 'slurm' options but no 'executor: slurm'; add it", at: s.key.span)
                }
            }
            if name == QueueSpec.defaultName { queues[0] = queue } else { queues.append(queue) }
        }
        return queues
    }

    private mutating func decodeSlurm(_ node: YAMLNode) -> SlurmOptions? {
        guard let pairs = mapping(node, expecting: "a mapping of Slurm options (partition, cpus-per-task, mem, time, account, args)") else {
            return nil
        }
        let keys = checkKeys(pairs, allowed: GraphKeys.slurm, context: "in slurm options")
        var options = SlurmOptions()
        options.partition = keys["partition"].flatMap { string($0.value, expecting: "a partition name") }
        options.account = keys["account"].flatMap { string($0.value, expecting: "an account name") }
        if let c = keys["cpus-per-task"], !c.value.isNull {
            if let n = integer(c.value), n > 0 {
                options.cpusPerTask = n
            } else {
                error("invalid cpus-per-task \(describe(c.value)); write a positive integer", at: c.value.span)
            }
        }
        if let m = keys["mem"], let text = string(m.value, expecting: "an amount of memory like 4G") {
            if Self.isSlurmMemory(text) { options.mem = text } else {
                error("invalid mem '\(text)'; write an amount like 4G, 512M or 1000 (megabytes)", at: m.value.span)
            }
        }
        if let t = keys["time"], let text = string(t.value, expecting: "a Slurm time limit like 1:00:00") {
            if Self.isSlurmTime(text) {
                options.time = text
            } else if let duration = try? DurationParser.parse(text) {
                // moon's own durations (30m, 1h30m) work too, as the issue's
                // example writes them; Slurm gets them as D-HH:MM:SS.
                options.time = Self.slurmTime(duration)
            } else {
                error("invalid time '\(text)'; write a duration (30m, 1h30m), minutes (30), hours:minutes:seconds (1:00:00) or days-hours:minutes:seconds (1-00:00:00)", at: t.value.span)
            }
        }
        if let a = keys["args"], !a.value.isNull {
            options.args = strings(a.value, expecting: "a list of srun arguments", item: "an argument") ?? []
        }
        return options
    }

    private mutating func decodeDefaults(_ node: YAMLNode, queues: [QueueSpec]) -> NodeDefaults {
        var defaults = NodeDefaults()
        if node.isNull { return defaults }
        guard let pairs = mapping(node, expecting: "a mapping of node defaults (queue, timeout, retry, shell, …)") else {
            return defaults
        }
        let keys = checkKeys(pairs, allowed: GraphKeys.defaults, context: "in defaults")
        if let q = keys["queue"], let index = queueIndex(q.value, queues: queues, owner: "defaults") { defaults.queue = index }
        if let t = keys["timeout"] { defaults.timeout = timeout(t.value) }
        if let r = keys["retry"], let policy = retry(r.value) { defaults.retry = policy }
        if let s = keys["shell"], let shell = shell(s.value) { defaults.shell = shell }
        if let d = keys["dir"] { defaults.dir = string(d.value, expecting: "a directory") }
        if let c = keys["continue-on-error"], let b = bool(c.value, key: "continue-on-error") { defaults.continueOnError = b }
        if let i = keys["if"], let condition = condition(i.value) { defaults.condition = condition }
        return defaults
    }

    // MARK: - Nodes

    private mutating func decodeNodes(_ nodesPair: YAMLNode.Pair, queues: [QueueSpec], defaults: NodeDefaults) -> [Node] {
        let value = nodesPair.value
        if value.isNull {
            error("'nodes' is empty; add at least one node", at: nodesPair.key.span)
            return []
        }
        guard let pairs = mapping(value, expecting: "a mapping of node names to nodes") else { return [] }
        if pairs.isEmpty { warning("the graph has no nodes", at: value.span) }

        // First pass: every name, so needs can refer to nodes defined later.
        var indexByName: [String: Int] = [:]
        indexByName.reserveCapacity(pairs.count)
        var accepted: [(name: String, pair: YAMLNode.Pair)] = []
        accepted.reserveCapacity(pairs.count)
        for pair in pairs {
            guard let name = keyName(pair.key) else { continue }
            guard Node.isValidName(name) else {
                error("invalid node name '\(name)'; \(Self.nameRule)", at: pair.key.span)
                continue
            }
            guard indexByName[name] == nil else {
                error("node '\(name)' is defined twice; rename or remove one", at: pair.key.span)
                continue
            }
            indexByName[name] = accepted.count
            accepted.append((name, pair))
        }
        let names = accepted.map(\.name)

        var nodes: [Node] = []
        nodes.reserveCapacity(accepted.count)
        for (index, entry) in accepted.enumerated() {
            let found = diagnostics.count
            nodes.append(decodeNode(entry.name, index: index, pair: entry.pair, names: names,
                                    indexByName: indexByName, queues: queues, defaults: defaults))
            // Tagged with the node, so that a problem in an anchor merged into many nodes is shown once.
            for i in found..<diagnostics.count { diagnostics[i].node = entry.name }
        }
        return nodes
    }

    private mutating func decodeNode(_ name: String, index: Int, pair: YAMLNode.Pair, names: [String],
                                     indexByName: [String: Int], queues: [QueueSpec], defaults: NodeDefaults) -> Node {
        var node = Node(name: name, nameSpan: pair.key.span, action: .shell(""), dir: defaults.dir,
                        queue: defaults.queue, timeout: defaults.timeout, retry: defaults.retry,
                        condition: defaults.condition, continueOnError: defaults.continueOnError,
                        shell: defaults.shell, span: pair.value.span)
        if pair.value.isNull {
            error("node '\(name)' has nothing to do; add 'run' (a command) or 'uses' (a built-in)", at: pair.key.span)
            return node
        }
        guard let body = mapping(pair.value, expecting: "a mapping for node '\(name)' (with 'run' or 'uses')") else { return node }
        let keys = checkKeys(body, allowed: GraphKeys.node, context: "in node '\(name)'")

        node.description = keys["description"].flatMap { string($0.value, expecting: "a description") }

        // needs
        if let needsPair = keys["needs"], !needsPair.value.isNull {
            let items: [YAMLNode]
            switch needsPair.value.kind {
            case .scalar: items = [needsPair.value]
            case .sequence(let list): items = list
            case .mapping:
                error("expected a list of node names, found a mapping", at: needsPair.value.span)
                items = []
            }
            // Duplicates found by a scan of what is kept while the list is
            // short (most are), a set beyond that.
            // Collected apart and stored once: each write through the node's
            // copy-on-write storage checks that it is unshared.
            var seen: Set<Int> = []
            var needs: [Int] = []
            needs.reserveCapacity(items.count)
            defer { node.needs = needs }
            for item in items {
                guard let need = string(item, expecting: "a node name") else { continue }
                guard let target = indexByName[need] else {
                    let hint = suggestion(for: need, in: names)
                    // Without a near name to suggest, say how to fix it.
                    let help = hint.isEmpty ? ["help: add a node '\(need)' under `nodes:`, or remove it from the needs of '\(name)'"] : []
                    error("node '\(name)' needs unknown node '\(need)'\(hint)", at: item.span, notes: help)
                    continue
                }
                if target == index {
                    error("node '\(name)' needs itself; remove '\(need)' from its needs", at: item.span)
                    continue
                }
                let duplicate = items.count <= 32 ? needs.contains(target) : !seen.insert(target).inserted
                guard !duplicate else {
                    warning("node '\(name)' needs '\(need)' more than once; remove the duplicate", at: item.span)
                    continue
                }
                needs.append(target)
            }
        }

        // run / uses / with
        let run = keys["run"], uses = keys["uses"], with = keys["with"]
        if run != nil, let uses {
            error("node '\(name)' has both 'run' and 'uses'; keep only one", at: uses.key.span)
        } else if let run {
            if let action = decodeRun(run) { node.action = action }
            if let with {
                error("'with' only applies to built-ins; remove it, or replace 'run' with 'uses'", at: with.key.span)
            }
        } else if let uses {
            if let action = decodeUses(uses, with: with) { node.action = action }
        } else {
            error("node '\(name)' has nothing to do; add 'run' (a command) or 'uses' (a built-in)", at: pair.key.span)
        }

        if let e = keys["env"] {
            node.env = variables(e.value, what: "environment variable", nameRule: .environment)
        }
        if let d = keys["dir"] { node.dir = string(d.value, expecting: "a directory") ?? defaults.dir }
        if let q = keys["queue"], let queue = queueIndex(q.value, queues: queues, owner: "node '\(name)'") { node.queue = queue }
        if let t = keys["timeout"] { node.timeout = timeout(t.value) }
        if let r = keys["retry"], let policy = retry(r.value) { node.retry = policy }
        if let i = keys["if"], let condition = condition(i.value) { node.condition = condition }
        if let c = keys["continue-on-error"], let b = bool(c.value, key: "continue-on-error") { node.continueOnError = b }
        if let s = keys["shell"], let shell = shell(s.value) {
            node.shell = shell
            if case .shell = node.action {} else if run != nil || uses != nil {
                warning("'shell' only applies to a string 'run'; node '\(name)' does not use a shell", at: s.key.span)
            }
        }
        // Expressions: read after `shell`, which decides how a script is quoted.
        let scope = ExpressionChecker.Scope(needs: node.needs.map { names[$0] }, owner: "node '\(name)'")
        if let run, case .shell = node.action {
            check(run.value, scope: scope, shell: node.shell)
        } else if let run {
            checkValues(of: run.value, scope: scope)
        }
        if let e = keys["env"] { checkValues(of: e.value, scope: scope) }
        if let with { checkValues(of: with.value, scope: scope) }
        if let d = keys["dir"] { check(d.value, scope: scope) }
        if let s = keys["sources"], !s.value.isNull {
            node.sources = globs(s.value, key: "sources")
        }
        if let g = keys["generates"], !g.value.isNull {
            node.generates = globs(g.value, key: "generates")
            if node.sources.isEmpty {
                warning("'generates' only matters with 'sources'; node '\(name)' always runs", at: g.key.span)
            }
        }
        if let d = keys["depfile"], !d.value.isNull,
           let path = string(d.value, expecting: "a path (relative to the node's dir)", allowNull: false) {
            if path.isEmpty {
                error("an empty 'depfile'; write the path the command writes, such as build/main.d", at: d.value.span)
            } else if path.contains("${{") {
                error("'depfile' cannot use expressions; write the path as it is", at: d.value.span)
            } else if node.dir?.contains("${{") == true {
                error("'depfile' is read relative to 'dir', which uses expressions here; write 'dir' as it is", at: d.key.span)
            } else {
                node.depfile = path
                if node.sources.isEmpty {
                    warning("'depfile' only matters with 'sources'; node '\(name)' always runs", at: d.key.span)
                }
            }
        }
        if let s = keys["slurm"], !s.value.isNull, let options = decodeSlurm(s.value) {
            node.slurm = options
            if queues[node.queue].slurm == nil {
                warning("node '\(name)' has 'slurm' options but its queue '\(queues[node.queue].name)' runs locally; they are ignored", at: s.key.span)
            }
        }
        return node
    }

    private mutating func decodeRun(_ pair: YAMLNode.Pair) -> NodeAction? {
        let value = pair.value
        switch value.kind {
        case .scalar(let text, _, _):
            if value.isNull || text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }) {
                error("'run' is empty; write the command to run", at: value.isNull ? pair.key.span : value.span)
                return nil
            }
            return .shell(text)
        case .sequence(let items):
            if items.isEmpty {
                error("'run' is an empty list; give the program and its arguments, e.g. [make, all]", at: value.span)
                return nil
            }
            var argv: [String] = []
            var ok = true
            for item in items {
                if let word = string(item, expecting: "a string (one argument)", allowNull: false) { argv.append(word) } else { ok = false }
            }
            if ok, argv[0].isEmpty {
                error("the program to run is empty; the first item of 'run' names the program", at: items[0].span)
                return nil
            }
            return ok ? .exec(argv) : nil
        case .mapping:
            error("expected a command (a string, or a list of strings), found a mapping", at: value.span)
            return nil
        }
    }

    private mutating func decodeUses(_ uses: YAMLNode.Pair, with: YAMLNode.Pair?) -> NodeAction? {
        if uses.value.isNull {
            error("'uses' is empty; name a built-in: \(BuiltinCatalog.names.joined(separator: ", "))", at: uses.key.span)
            return nil
        }
        guard let name = string(uses.value, expecting: "the name of a built-in") else { return nil }
        guard let builtin = BuiltinCatalog.builtin(named: name) else {
            error("unknown built-in '\(name)'\(suggestion(for: name, in: BuiltinCatalog.names))", at: uses.value.span,
                  notes: ["built-ins: " + BuiltinCatalog.names.joined(separator: ", ")])
            return nil
        }
        var arguments: [String: BuiltinArgument] = [:]
        var ok = true
        var given: Set<String> = []
        if let with, !with.value.isNull {
            guard let pairs = mapping(with.value, expecting: "a mapping of parameters for built-in '\(name)'") else { return nil }
            let allowed = builtin.parameters.map { GraphKeys.Key($0.name, $0.description) }
            let keys = checkKeys(pairs, allowed: allowed, context: "for built-in '\(name)'", noun: "parameter")
            for parameter in builtin.parameters {
                guard let pair = keys[parameter.name], !pair.value.isNull else { continue }
                given.insert(parameter.name)
                guard let text = string(pair.value, expecting: parameter.kind.expectation, allowNull: false) else {
                    ok = false
                    continue
                }
                switch BuiltinCatalog.argument(text, for: parameter) {
                case .success(let argument): arguments[parameter.name] = argument
                case .failure:
                    ok = false
                    error("invalid \(parameter.name) '\(text)' for built-in '\(name)'; write \(parameter.kind.expectation)", at: pair.value.span)
                }
            }
        }
        let anchor = with?.key.span ?? uses.value.span
        for parameter in builtin.parameters where parameter.required && !given.contains(parameter.name) {
            ok = false
            error("built-in '\(name)' needs '\(parameter.name)' (\(parameter.kind.expectation)); add it under 'with'", at: anchor)
        }
        for group in builtin.exactlyOneOf {
            let count = group.filter(given.contains).count
            if count != 1 {
                ok = false
                let list = group.map { "'\($0)'" }.joined(separator: " or ")
                error("built-in '\(name)' needs exactly one of \(list) under 'with'", at: anchor)
            }
        }
        return ok ? .builtin(name, with: arguments) : nil
    }

    // MARK: - Cycles

    private mutating func findCycles(_ nodes: [Node]) {
        for cycle in CycleFinder.cycles(successors: nodes.map(\.needs)) {
            let names = cycle.map { nodes[$0].name }
            let path = Self.cyclePath(names)
            error("dependency cycle: \(path)", at: nodes[cycle[0]].nameSpan,
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

    // MARK: - Values

    private mutating func timeout(_ node: YAMLNode) -> Duration? {
        if node.isNull { return nil }
        if case .scalar("none", .plain, nil) = node.kind { return nil }
        guard let d = duration(node) else { return nil }
        if d <= .zero {
            error("a timeout must be longer than 0s; remove it or write 'none' for no timeout", at: node.span)
            return nil
        }
        return d
    }

    private mutating func duration(_ node: YAMLNode) -> Duration? {
        guard let text = string(node, expecting: DurationParser.acceptedForms, allowNull: false) else { return nil }
        do {
            return try DurationParser.parse(text)
        } catch {
            self.error(error.description, at: node.span)
            return nil
        }
    }

    private mutating func retry(_ node: YAMLNode) -> RetryPolicy? {
        if node.isNull { return nil }
        switch node.kind {
        case .scalar:
            guard let n = integer(node), n >= 0 else {
                error("invalid retry \(describe(node)); write a number of extra attempts (0 or more) or {times, delay, backoff, max-delay}", at: node.span)
                return nil
            }
            return RetryPolicy(times: n)
        case .sequence:
            error("expected a number of retries or a mapping {times, delay, backoff, max-delay}, found a list", at: node.span)
            return nil
        case .mapping(let pairs):
            let keys = checkKeys(pairs, allowed: GraphKeys.retry, context: "in retry")
            var policy = RetryPolicy()
            var ok = true
            if let t = keys["times"], !t.value.isNull {
                if let n = integer(t.value), n >= 0 { policy.times = n } else {
                    ok = false
                    error("invalid times \(describe(t.value)); write a number of extra attempts (0 or more)", at: t.value.span)
                }
            } else {
                ok = false
                error("retry needs 'times' (the number of extra attempts)", at: node.span)
            }
            if let d = keys["delay"], !d.value.isNull {
                if let delay = duration(d.value) { policy.delay = delay } else { ok = false }
            }
            if let b = keys["backoff"], !b.value.isNull {
                if let factor = number(b.value), factor >= 1, factor.isFinite { policy.backoff = factor } else {
                    ok = false
                    error("invalid backoff \(describe(b.value)); write a number of at least 1 (1 keeps the delay constant, 2 doubles it)", at: b.value.span)
                }
            }
            if let m = keys["max-delay"], !m.value.isNull {
                if let maxDelay = duration(m.value) { policy.maxDelay = maxDelay } else { ok = false }
            }
            return ok ? policy : nil
        }
    }

    private mutating func condition(_ node: YAMLNode) -> RunCondition? {
        if node.isNull { return nil }
        return word(node, choices: RunCondition.allCases.map(\.rawValue), what: "condition").flatMap(RunCondition.init(rawValue:))
    }

    private mutating func shell(_ node: YAMLNode) -> Shell? {
        if node.isNull { return nil }
        return word(node, choices: Shell.allCases.map(\.rawValue), what: "shell").flatMap(Shell.init(rawValue:))
    }

    private mutating func queueIndex(_ node: YAMLNode, queues: [QueueSpec], owner: @autoclosure () -> String) -> Int? {
        if node.isNull { return nil }
        guard let name = string(node, expecting: "a queue name") else { return nil }
        if let index = queues.firstIndex(where: { $0.name == name }) { return index }
        let names = queues.map(\.name)
        error("\(owner()) uses unknown queue '\(name)'\(suggestion(for: name, in: names))", at: node.span,
              notes: ["queues: " + names.joined(separator: ", ") + "; declare new ones under 'queues:'"])
        return nil
    }

    /// One of a few words; otherwise an error naming them, with a suggestion.
    private mutating func word(_ node: YAMLNode, choices: [String], what: String) -> String? {
        guard let text = string(node, expecting: "one of " + choices.joined(separator: ", ")) else { return nil }
        if choices.contains(text) { return text }
        let list = choices.map { "'\($0)'" }.joined(separator: ", ")
        error("unknown \(what) '\(text)'\(suggestion(for: text, in: choices)); write one of \(list)", at: node.span)
        return nil
    }

    enum NameRule { case variable, environment }

    private mutating func variables(_ node: YAMLNode, what: String, nameRule: NameRule) -> Variables {
        var result = Variables()
        if node.isNull { return result }
        guard let pairs = mapping(node, expecting: "a mapping of \(what) names to values") else { return result }
        for pair in pairs {
            guard let name = keyName(pair.key) else { continue }
            if !Self.isIdentifier(name, allowDash: nameRule == .variable) {
                let rule = nameRule == .variable
                    ? "names start with a letter or '_' and contain only letters, digits, '_' and '-'"
                    : "names start with a letter or '_' and contain only letters, digits and '_'"
                error("invalid \(what) name '\(name)'; \(rule)", at: pair.key.span)
                continue
            }
            switch pair.value.kind {
            case .scalar(let text, _, _):
                if pair.value.isNull {
                    error("\(what) '\(name)' has no value; write '' for an empty string", at: pair.value.span)
                } else {
                    result[name] = text
                }
            case .sequence, .mapping:
                error("expected a string, number or boolean for \(what) '\(name)', found \(describe(pair.value))", at: pair.value.span)
            }
        }
        return result
    }

    /// `sources:` / `generates:`: a glob or a list of globs, relative to the
    /// graph file; empty ones and expressions are errors.
    private mutating func globs(_ node: YAMLNode, key: String) -> [String] {
        let items: [YAMLNode]
        switch node.kind {
        case .scalar: items = [node]
        case .sequence(let list): items = list
        case .mapping:
            error("expected a glob or a list of globs for '\(key)', found a mapping", at: node.span)
            return []
        }
        var result: [String] = []
        for item in items {
            guard let text = string(item, expecting: "a glob (a path relative to the graph file)", allowNull: false) else { continue }
            if text.isEmpty {
                error("an empty glob in '\(key)'; write a path such as src/**/*.swift", at: item.span)
            } else if text.contains("${{") {
                error("'\(key)' cannot use expressions; write the paths as they are", at: item.span)
            } else {
                if key == "sources", let root = Self.walkOutsideTheGraph(text) {
                    warning("'sources' pattern '\(text)' walks \(root): every run stats, and hashes when changed, every file it matches",
                            at: item.span, notes: ["help: name the directories the node reads, e.g. 'src/**' or '../common/include/**'"])
                }
                result.append(text)
            }
        }
        return result
    }

    /// What a `sources` pattern walks when its walk starts at the root of
    /// the file system or at a directory above the graph's (`/**`,
    /// `../**`): a description for a warning, else nil. A pattern below a
    /// named directory (`/opt/sdk/**`, `../common/**`) may well be meant.
    static func walkOutsideTheGraph(_ pattern: String) -> String? {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true)
        guard let wild = segments.firstIndex(where: { $0.contains(where: { "*?[{".contains($0) }) }) else { return nil }
        let fixed = segments[..<wild].filter { $0 != "." }
        if pattern.hasPrefix("/") {
            return fixed.isEmpty ? "the whole file system" : nil
        }
        guard !fixed.isEmpty, fixed.allSatisfy({ $0 == ".." }) else { return nil }
        return "'\(fixed.joined(separator: "/"))', a directory above the graph's, and all of it"
    }

    /// A list of strings, or one string taken as a list of one.
    private mutating func strings(_ node: YAMLNode, expecting: String, item: String) -> [String]? {
        switch node.kind {
        case .scalar: return string(node, expecting: item).map { [$0] }
        case .sequence(let items):
            var result: [String] = []
            for element in items {
                if let text = string(element, expecting: item, allowNull: false) { result.append(text) }
            }
            return result
        case .mapping:
            error("expected \(expecting), found a mapping", at: node.span)
            return nil
        }
    }

    /// A scalar's text. Null is "not set" (nil, no error) unless `allowNull` is false.
    private mutating func string(_ node: YAMLNode, expecting: @autoclosure () -> String, allowNull: Bool = true) -> String? {
        if case .scalar(let text, _, _) = node.kind {
            if node.isNull {
                if !allowNull { error("expected \(expecting()), found null", at: node.span) }
                return nil
            }
            return text
        }
        error("expected \(expecting()), found \(describe(node))", at: node.span)
        return nil
    }

    /// A plain (unquoted) decimal integer, as YAML's core schema reads it.
    private func integer(_ node: YAMLNode) -> Int? {
        guard case .scalar(let text, let style, let tag) = node.kind, Self.isResolvable(style, tag, "int") else { return nil }
        let digits = text.hasPrefix("+") ? String(text.dropFirst()) : text
        return Int(digits)
    }

    private func number(_ node: YAMLNode) -> Double? {
        guard case .scalar(let text, let style, let tag) = node.kind,
              Self.isResolvable(style, tag, "float") || Self.isResolvable(style, tag, "int") else { return nil }
        guard let first = text.first, first.isNumber || first == "." || first == "+" || first == "-" else { return nil }
        return Double(text)
    }

    private mutating func bool(_ node: YAMLNode, key: String) -> Bool? {
        if node.isNull { return nil }
        if case .scalar(let text, let style, let tag) = node.kind, Self.isResolvable(style, tag, "bool") {
            switch text {
            case "true", "True", "TRUE": return true
            case "false", "False", "FALSE": return false
            default: break
            }
        }
        error("expected true or false for '\(key)', found \(describe(node))", at: node.span)
        return nil
    }

    private static func isResolvable(_ style: YAMLNode.ScalarStyle, _ tag: String?, _ type: String) -> Bool {
        if let tag { return tag == "tag:yaml.org,2002:\(type)" || tag == "!!\(type)" }
        return style == .plain
    }

    // MARK: - Mappings and keys

    private mutating func mapping(_ node: YAMLNode, expecting: @autoclosure () -> String) -> [YAMLNode.Pair]? {
        if let pairs = node.pairs { return pairs }
        error("expected \(expecting()), found \(describe(node))", at: node.span)
        return nil
    }

    /// A mapping key's text; an error for a key that is a list or a mapping.
    private mutating func keyName(_ key: YAMLNode) -> String? {
        if case .scalar(let text, _, _) = key.kind { return text }
        error("expected a name as key, found \(describe(key))", at: key.span)
        return nil
    }

    /// The pairs of `pairs` by key, reporting unknown keys (with a suggestion
    /// and the list of valid ones) and duplicates. Null values are kept: each
    /// key decides whether null means "not set".
    private mutating func checkKeys(_ pairs: [YAMLNode.Pair], allowed: [GraphKeys.Key], context: @autoclosure () -> String,
                                    ignoringPrefix: String? = nil, noun: String = "key") -> CheckedKeys {
        var result = CheckedKeys()
        result.pairs.reserveCapacity(pairs.count)
        for pair in pairs {
            guard let key = keyName(pair.key) else { continue }
            if let ignoringPrefix, key.hasPrefix(ignoringPrefix) { continue }
            guard allowed.contains(where: { $0.name == key }) else {
                let names = allowed.map(\.name)
                error("unknown \(noun) '\(key)' \(context())\(suggestion(for: key, in: names))", at: pair.key.span,
                      notes: ["valid \(noun)s: " + names.joined(separator: ", ")])
                continue
            }
            if result[key] != nil {
                error("duplicate \(noun) '\(key)' \(context()); remove one", at: pair.key.span)
                continue
            }
            result.pairs.append((key, pair))
        }
        return result
    }

    /// The pairs of a mapping whose keys passed `checkKeys`, by key. A
    /// mapping has a few keys: a list searched in order costs less than a
    /// dictionary built per node (hashing each key twice).
    struct CheckedKeys {
        var pairs: [(key: String, pair: YAMLNode.Pair)] = []

        subscript(_ key: String) -> YAMLNode.Pair? {
            pairs.first(where: { $0.key == key })?.pair
        }
    }

    // MARK: - Helpers

    static let nameRule = "names start with a letter, digit or '_' and contain only letters, digits, '_', '.', '+' and '-'"

    static func isIdentifier(_ name: String, allowDash: Bool) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || (allowDash && $0 == "-"))
        }
    }

    /// Slurm memory: digits with an optional K, M, G or T unit.
    static func isSlurmMemory(_ text: String) -> Bool {
        var digits = Substring(text)
        if let last = digits.last, "KMGTkmgt".contains(last) { digits = digits.dropLast() }
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A duration as a Slurm time limit, rounded up to whole seconds
    /// (`D-HH:MM:SS`, or `HH:MM:SS` under a day). A bare number in `time:`
    /// stays Slurm's: minutes.
    static func slurmTime(_ duration: Duration) -> String {
        let (whole, atto) = duration.components
        let total = max(1, whole + (atto > 0 ? 1 : 0))
        let days = total / 86_400, hours = (total % 86_400) / 3600, minutes = (total % 3600) / 60, seconds = total % 60
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let clock = "\(two(hours)):\(two(minutes)):\(two(seconds))"
        return days > 0 ? "\(days)-\(clock)" : clock
    }

    /// Slurm time: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`, or `UNLIMITED`/`INFINITE`.
    static func isSlurmTime(_ text: String) -> Bool {
        if text == "UNLIMITED" || text == "INFINITE" || text == "infinite" || text == "unlimited" { return true }
        func numbers(_ s: Substring) -> Int? {
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
            return parts.count
        }
        let dash = text.split(separator: "-", omittingEmptySubsequences: false)
        switch dash.count {
        case 1: return numbers(dash[0]).map { (1...3).contains($0) } ?? false
        case 2:
            guard numbers(dash[0]) == 1 else { return false }
            return numbers(dash[1]).map { (1...3).contains($0) } ?? false
        default: return false
        }
    }

    private mutating func suggestion(for word: String, in candidates: [String]) -> String {
        guard suggestionBudget > 0 else { return "" }
        suggestionBudget -= max(candidates.count, 1)
        return Suggestion.clause(for: word, in: candidates)
    }

    /// How a value is named in "found …": `a mapping`, `a list`, `null`, `the string "4"`, `'yes'`.
    private func describe(_ node: YAMLNode) -> String {
        switch node.kind {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar(let text, let style, _):
            if node.isNull { return "null" }
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return style == .plain ? "'\(shown)'" : "the string \"\(shown)\""
        }
    }

    private mutating func error(_ message: String, at span: SourceSpan?, notes: [String] = []) {
        diagnostics.append(Diagnostic(.error, message, at: span, notes: notes))
    }

    private mutating func warning(_ message: String, at span: SourceSpan?, notes: [String] = []) {
        diagnostics.append(Diagnostic(.warning, message, at: span, notes: notes))
    }
}
