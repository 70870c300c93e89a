import MoonDocument

/// Decodes one entry under `nodes:` into a `Node` and its `NodeReferences`: what it runs
/// (`run`, or `uses` with `with`), its settings over the graph's defaults,
/// its files (`sources`, `generates`, `depfile`) and Slurm options. Names
/// in `needs` and expressions are left to `GraphAnalyzer`.
struct NodeDecoder {
    let queues: [QueueSpec]
    let defaults: NodeDefaults
    /// The key after this node is one of its own keys written at the
    /// node-name level (`GraphDecoder`), so a missing `run` is already told.
    var keyDedented = false

    /// Whether a node named `name` with this value is a node key indented
    /// as a node name: a key of `GraphKeys.node` whose value is no mapping.
    static func isDedentedKey(_ name: String, value: YAMLNode) -> Bool {
        value.pairs == nil && !value.isNull && GraphKeys.node.contains { $0.name == name }
    }

    func decode(_ name: String, pair: YAMLNode.Pair, _ values: inout ValueDecoding) -> (Node, NodeReferences) {
        var node = Node(name: name, nameSpan: pair.key.span, action: .shell(""), dir: defaults.dir,
                        queue: defaults.queue, timeout: defaults.timeout, retry: defaults.retry,
                        condition: defaults.condition, continueOnError: defaults.continueOnError,
                        shell: defaults.shell, span: pair.value.span)
        if defaults.successCodes != Node.defaultSuccessCodes { node.successCodes = defaults.successCodes }
        if !defaults.resources.isEmpty { node.resources = defaults.resources }
        var references = NodeReferences()
        if pair.value.isNull {
            if !keyDedented {
                values.error("node '\(name)' has nothing to do; add 'run' (a command) or 'uses' (a built-in)", at: pair.key.span)
            }
            return (node, references)
        }
        guard let body = values.mapping(pair.value, expecting: "a mapping for node '\(name)' (with 'run' or 'uses')") else {
            return (node, references)
        }
        let keys = values.checkKeys(body, allowed: GraphKeys.node, context: "in node '\(name)'", synonyms: GraphKeys.nodeSynonyms)
        if let d = keys["description"], let text = values.string(d.value, expecting: "a description") { node.description = text }
        if let needs = keys["needs"], !needs.value.isNull {
            references.needs = self.needs(needs.value, paths: &references.pathNeeds, &values)
            // `:NAME` waits for the root graph (`RootNeeds`); the analyzer resolves the others here.
            if references.needs.contains(where: { $0.name.hasPrefix(":") }) {
                references.rootNeeds = references.needs.filter { $0.name.hasPrefix(":") }
                references.needs.removeAll { $0.name.hasPrefix(":") }
            }
        }
        // `shell: "zcat … | groff"` (Snakemake) or `cmd:` (go-task): the command
        // is under the wrong key, which has its error; it is not missing.
        let commandMisplaced = keys["run"] == nil && keys["uses"] == nil
            && (keys["shell"].map { Self.holdsCommand($0.value) } == true
                || body.contains { $0.key.scalar.flatMap { GraphKeys.nodeSynonyms[$0]?.suggestion } == "run" })
        action(of: &node, keys: keys, nameSpan: pair.key.span,
               hasNeeds: !references.needs.isEmpty || !references.rootNeeds.isEmpty || commandMisplaced, &values)
        settings(of: &node, keys: keys, &values)
        references.fanOut = fanOut(of: name, keys: keys, &values)
        if let p = keys["params"], !p.value.isNull { node.params = params(p.value, &values) }
        if let i = keys["internal"], let b = values.bool(i.value, key: "internal") { node.isInternal = b }
        lifecycle(of: &node, keys: keys, &values)
        if keys["interactive"] != nil || keys["confirm"] != nil { NodeInteraction.decode(&node, keys: keys, &values) }
        references.sources = keys["sources"]?.value
        references.generates = keys["generates"]?.value
        references.depfile = keys["depfile"]?.value
        references.run = keys["run"]?.value
        references.env = keys["env"]?.value
        references.with = keys["with"]?.value
        references.dir = keys["dir"]?.value
        files(of: &node, keys: keys, &values)
        if let r = keys["resources"], let spec = ResourceSpec.decode(r.value, &values) { node.resources = spec.over(defaults.resources) }
        if let s = keys["slurm"], !s.value.isNull, let options = QueueDecoder.slurm(s.value, &values) {
            node.slurm = options
            if queues[node.queue].slurm == nil {
                values.warning("node '\(name)' has 'slurm' options but its queue '\(queues[node.queue].name)' runs locally; they are ignored", at: s.key.span)
            }
        }
        return (node, references)
    }

    /// Whether a `shell:` value is a command rather than a shell's name.
    static func holdsCommand(_ value: YAMLNode) -> Bool {
        guard let text = value.scalar, !value.isNull else { return false }
        return Shell(rawValue: text) == nil && text.contains(where: { $0 == " " || $0 == "|" || $0 == ">" || $0 == "{" })
    }

    /// The names under `needs:`: one name, or a list of them.
    private func needs(_ value: YAMLNode, paths: inout [NodeReferences.Need], _ values: inout ValueDecoding) -> [NodeReferences.Need] {
        var needs: [NodeReferences.Need] = []
        func add(_ item: YAMLNode) {
            guard let name = values.string(item, expecting: "a node name") else { return }
            if name.hasPrefix(":") || name.hasPrefix("..") {
                let rest = name.drop { $0 == ":" || $0 == "." || $0 == "/" }
                guard name.hasPrefix(":"), !name.hasPrefix("::"), Node.isValidReference(String(rest)) else {
                    values.error("invalid need '\(name)'; write ':NAME' for a node of the root graph, or NAME for one of this file", at: item.span,
                                 notes: rest.isEmpty ? [] : ["help: did you mean ':\(rest)'?"])
                    return
                }
            }
            // `needs: [out/counts]`: a file where a node belongs (`GraphDecoder` says which node writes it).
            if name.contains("/"), !name.contains("["), !name.contains("${{") {
                paths.append(NodeReferences.Need(name: name, node: item))
                return
            }
            needs.append(NodeReferences.Need(name: name, node: item))
        }
        if let items = value.items {
            needs.reserveCapacity(items.count)
            for item in items { add(item) }
        } else if value.pairs != nil {
            values.error("expected a list of node names, found a mapping", at: value.span)
        } else {
            add(value)
        }
        return needs
    }

    /// `run`, or `uses` with `with`: exactly one of them.
    private func action(of node: inout Node, keys: ValueDecoding.CheckedKeys, nameSpan: SourceSpan, hasNeeds: Bool,
                        _ values: inout ValueDecoding) {
        let name = node.name
        let run = keys["run"], uses = keys["uses"], with = keys["with"]
        if run != nil, let uses {
            values.error("node '\(name)' has both 'run' and 'uses'; keep only one", at: uses.key.span)
        } else if let run {
            if let action = self.run(run, &values) { node.action = action }
            if let with {
                values.error("'with' only applies to built-ins; remove it, or replace 'run' with 'uses'", at: with.key.span)
            }
        } else if let uses {
            if let action = self.uses(uses, with: with, &values) { node.action = action }
        } else if hasNeeds {
            node.action = .group
        } else if !keyDedented {
            values.error("node '\(name)' has nothing to do; add 'run' (a command) or 'uses' (a built-in)", at: nameSpan,
                         notes: ["help: a node with only 'needs' is a group of them"])
        }
    }

    /// The settings a node may take over the graph's defaults.
    private func settings(of node: inout Node, keys: ValueDecoding.CheckedKeys, _ values: inout ValueDecoding) {
        let name = node.name
        if let e = keys["env"] {
            node.env = values.variables(e.value, what: "environment variable", nameRule: .environment)
        }
        if let d = keys["dir"] { node.dir = values.string(d.value, expecting: "a directory") ?? defaults.dir }
        if let q = keys["queue"], let queue = QueueDecoder.queueIndex(q.value, queues: queues, owner: "node '\(name)'", &values) {
            node.queue = queue
        }
        if let t = keys["timeout"] { node.timeout = values.timeout(t.value) }
        if let r = keys["retry"], let policy = values.retry(r.value) { node.retry = policy }
        if let i = keys["if"], let condition = values.condition(i.value) { node.condition = condition }
        if let c = keys["continue-on-error"], let b = values.bool(c.value, key: "continue-on-error") { node.continueOnError = b }
        if let p = keys["priority"], !p.value.isNull {
            if let n = values.integer(p.value), Plan.priorities.contains(n) {
                node.priority = n
            } else {
                values.error("invalid priority \(values.describe(p.value)); write an integer from \(Plan.priorities.lowerBound) to \(Plan.priorities.upperBound) (default 0; higher starts first)",
                             at: p.value.span)
            }
        }
        if let c = keys["success-codes"], let codes = values.successCodes(c.value) {
            node.successCodes = codes
            if keys["run"] == nil {
                values.warning("'success-codes' only applies to a command ('run'); node '\(name)' runs none", at: c.key.span)
            }
        }
        if let s = keys["shell"], Self.holdsCommand(s.value) {
            values.error("'shell' names the shell (sh or bash); the command goes in 'run'", at: s.key.span,
                         notes: ["help: write run: \(s.value.scalar ?? "") (and shell: bash only for bash's features)"])
        } else if let s = keys["shell"], let shell = values.shell(s.value) {
            node.shell = shell
            if case .shell = node.action {} else if keys["run"] != nil || keys["uses"] != nil {
                values.warning("'shell' only applies to a string 'run'; node '\(name)' does not use a shell", at: s.key.span)
            }
        }
    }

    /// `service` and `restart`: how a long-running node lives (see `Node.isService`).
    private func lifecycle(of node: inout Node, keys: ValueDecoding.CheckedKeys, _ values: inout ValueDecoding) {
        let name = node.name
        if let s = keys["service"], let b = values.bool(s.value, key: "service"), b {
            if case .group = node.action {
                values.error("node '\(name)' is a group (it has no 'run' or 'uses'), so it cannot be a service; give it a command, or remove 'service'",
                             at: s.key.span)
            } else {
                node.isService = true
            }
        }
        guard let r = keys["restart"], let text = values.string(r.value, expecting: "on-change or never") else { return }
        switch text {
        case "on-change": node.restartsOnChange = true
        case "never":
            if keys["service"] == nil || !node.isService {
                values.error("'restart: never' needs 'service: true': a node that ends must run again when its inputs change; remove 'restart', or make the node a service",
                             at: r.value.span)
            } else {
                node.restartsOnChange = false
            }
        default:
            values.error("'restart' is on-change or never, not '\(text)'", at: r.value.span,
                         notes: ["help: on-change restarts the node when its inputs change in watch mode; never leaves a service running"])
        }
    }

    /// `sources`, `generates` and `depfile`: what decides whether the node is up to date.
    private func files(of node: inout Node, keys: ValueDecoding.CheckedKeys, _ values: inout ValueDecoding) {
        let name = node.name
        if let s = keys["sources"], !s.value.isNull {
            node.sources = globs(s.value, key: "sources", &values)
        }
        if let g = keys["generates"], !g.value.isNull {
            node.generates = globs(g.value, key: "generates", &values)
            if node.sources.isEmpty {
                values.warning("'generates' only matters with 'sources'; node '\(name)' always runs", at: g.key.span)
            }
        }
        if let c = keys["cache"], let b = values.bool(c.value, key: "cache") { node.cached = b }
        guard let d = keys["depfile"], !d.value.isNull,
              let path = values.string(d.value, expecting: "a path (relative to the node's dir)", allowNull: false) else { return }
        if path.isEmpty {
            values.error("an empty 'depfile'; write the path the command writes, such as build/main.d", at: d.value.span)
        } else if node.dir?.contains("${{") == true {
            values.error("'depfile' is read relative to 'dir', which uses expressions here; write 'dir' as it is", at: d.key.span)
        } else {
            node.depfile = path
            if node.sources.isEmpty {
                values.warning("'depfile' only matters with 'sources'; node '\(name)' always runs", at: d.key.span)
            }
        }
    }

    private func run(_ pair: YAMLNode.Pair, _ values: inout ValueDecoding) -> NodeAction? {
        let value = pair.value
        switch value.kind {
        case .scalar(let text, _, _):
            if value.isNull || text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }) {
                values.error("'run' is empty; write the command to run", at: value.isNull ? pair.key.span : value.span)
                return nil
            }
            return .shell(text)
        case .sequence(let items):
            if items.isEmpty {
                values.error("'run' is an empty list; give the program and its arguments, e.g. [make, all]", at: value.span)
                return nil
            }
            var argv: [String] = []
            var ok = true
            for item in items {
                if let word = values.string(item, expecting: "a string (one argument)", allowNull: false) { argv.append(word) } else { ok = false }
            }
            if ok, argv[0].isEmpty {
                values.error("the program to run is empty; the first item of 'run' names the program", at: items[0].span)
                return nil
            }
            return ok ? .exec(argv) : nil
        case .mapping:
            values.error("expected a command (a string, or a list of strings), found a mapping", at: value.span)
            return nil
        }
    }

    private func uses(_ uses: YAMLNode.Pair, with: YAMLNode.Pair?, _ values: inout ValueDecoding) -> NodeAction? {
        if uses.value.isNull {
            values.error("'uses' is empty; name a built-in: \(BuiltinCatalog.names.joined(separator: ", "))", at: uses.key.span)
            return nil
        }
        guard let name = values.string(uses.value, expecting: "the name of a built-in") else { return nil }
        guard let builtin = BuiltinCatalog.builtin(named: name) else {
            values.error("unknown built-in '\(name)'\(values.suggestion(for: name, in: BuiltinCatalog.names))", at: uses.value.span,
                  notes: ["built-ins: " + BuiltinCatalog.names.joined(separator: ", ")])
            return nil
        }
        var arguments: [String: BuiltinArgument] = [:]
        var ok = true
        var given: Set<String> = []
        if let with, !with.value.isNull {
            guard let pairs = values.mapping(with.value, expecting: "a mapping of parameters for built-in '\(name)'") else { return nil }
            let allowed = builtin.parameters.map { GraphKeys.Key($0.name, $0.description) }
            let keys = values.checkKeys(pairs, allowed: allowed, context: "for built-in '\(name)'", noun: "parameter")
            for parameter in builtin.parameters {
                guard let pair = keys[parameter.name], !pair.value.isNull else { continue }
                given.insert(parameter.name)
                guard let text = values.string(pair.value, expecting: parameter.kind.expectation, allowNull: false) else {
                    ok = false
                    continue
                }
                switch BuiltinCatalog.argument(text, for: parameter) {
                case .success(let argument): arguments[parameter.name] = argument
                case .failure:
                    ok = false
                    values.error("invalid \(parameter.name) '\(text)' for built-in '\(name)'; write \(parameter.kind.expectation)", at: pair.value.span)
                }
            }
        }
        let anchor = with?.key.span ?? uses.value.span
        for parameter in builtin.parameters where parameter.required && !given.contains(parameter.name) {
            ok = false
            values.error("built-in '\(name)' needs '\(parameter.name)' (\(parameter.kind.expectation)); add it under 'with'", at: anchor)
        }
        for group in builtin.exactlyOneOf {
            let count = group.filter(given.contains).count
            if count != 1 {
                ok = false
                let list = group.map { "'\($0)'" }.joined(separator: " or ")
                values.error("built-in '\(name)' needs exactly one of \(list) under 'with'", at: anchor)
            }
        }
        return ok ? .builtin(name, with: arguments) : nil
    }
    /// `sources:` / `generates:`: a glob or a list of globs, relative to the
    /// graph file; empty ones and expressions are errors.
    private func globs(_ node: YAMLNode, key: String, _ values: inout ValueDecoding) -> [String] {
        let items: [YAMLNode]
        switch node.kind {
        case .scalar: items = [node]
        case .sequence(let list): items = Array(list)
        case .mapping:
            values.error("expected a glob or a list of globs for '\(key)', found a mapping", at: node.span)
            return []
        }
        var result: [String] = []
        for item in items {
            if item.items != nil {
                // `sources: [*code, README.md]`: YAML puts the alias's list inside this one.
                values.error("expected a glob (a path relative to the graph file), found a list", at: item.span,
                             notes: ["help: a list written inside '\(key)' (often an alias of a list) is not spliced into it; write its globs in this list"])
                continue
            }
            guard let text = values.string(item, expecting: "a glob (a path relative to the graph file)", allowNull: false) else { continue }
            if text.isEmpty {
                values.error("an empty glob in '\(key)'; write a path such as src/**/*.swift", at: item.span)
            } else {
                if key == "sources", let root = Self.walkOutsideTheGraph(text) {
                    values.warning("'sources' pattern '\(text)' walks \(root): every run stats, and hashes when changed, every file it matches",
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
    }}
