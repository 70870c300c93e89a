import MoonCommand
import MoonDocument

/// Decodes a loaded YAML tree into a `GraphDeclaration`: the first stage of
/// reading a graph file, before `GraphAnalyzer`. It checks the shape and the
/// type of every value and collects every problem (not only the first) as a
/// `Diagnostic` at the span the user must fix. No I/O; linear in the size of
/// the file.
struct GraphDecoder {
    let path: String
    private(set) var values = ValueDecoding()

    init(path: String) {
        self.path = path
    }

    var diagnostics: [Diagnostic] { values.diagnostics }

    /// The declaration of the file; nil when its top level is not a mapping.
    mutating func decode(_ root: YAMLNode) -> GraphDeclaration? {
        guard let top = values.mapping(root, expecting: "a mapping of graph settings (version, nodes, …) at the top of the file") else {
            return nil
        }
        let keys = values.checkKeys(top, allowed: GraphKeys.top, context: "at the top level", ignoringPrefix: "x-")
        let rootStart = SourceSpan(file: root.span.file, start: root.span.start, end: root.span.start)
        version(keys["version"], rootStart: rootStart)

        var graph = GraphDeclaration(name: keys["name"].flatMap { values.string($0.value, expecting: "a graph name") } ?? Graph.stem(of: path),
                                     path: path)
        graph.description = keys["description"].flatMap { values.string($0.value, expecting: "a description") }
        if let v = keys["vars"] {
            graph.vars = values.variables(v.value, what: "variable", nameRule: .variable, allowLists: true)
            graph.varsValue = v.value
        }
        if let d = keys["default"], !d.value.isNull { graph.defaultTargets = names(d.value, expecting: "a node name, or a list of them") }
        if let i = keys["includes"], !i.value.isNull { graph.includes = includes(i.value) }
        if let e = keys["env"] {
            graph.env = values.variables(e.value, what: "environment variable", nameRule: .environment)
            graph.envValue = e.value
        }
        if let d = keys["dotenv"] { graph.dotenv = dotenv(d.value) }
        if let s = keys["secrets"] { graph.secrets = values.secrets(s.value) }
        if let c = keys["cache"] { graph.cache = values.cacheSettings(c.value) }
        graph.nodeNames = keys["nodes"]?.value.pairs?.compactMap(\.key.scalar) ?? []
        graph.defaultsDir = keys["defaults"]?.value.pairs?.first(where: { $0.key.scalar == "dir" })?.value
        if let q = keys["queues"] { graph.queues = QueueDecoder.queues(q.value, &values) }
        if let d = keys["defaults"] { graph.defaults = QueueDecoder.defaults(d.value, queues: graph.queues, &values) }
        if let nodesPair = keys["nodes"] {
            nodes(nodesPair, into: &graph)
        } else {
            values.error("missing 'nodes'; add a 'nodes:' mapping of node names to nodes", at: rootStart)
        }
        return graph
    }

    /// `version: 1`, the only version there is.
    private mutating func version(_ pair: YAMLNode.Pair?, rootStart: SourceSpan) {
        guard let pair else {
            values.error("missing 'version'; add 'version: 1' at the top of the file", at: rootStart)
            return
        }
        let value = pair.value
        if case .scalar(let text, _, _) = value.kind, !value.isNull {
            if text != "1" {
                values.error("unsupported version '\(text)'; this moon reads 'version: 1'", at: value.span)
            }
        } else {
            values.error("expected 'version: 1', found \(values.describe(value))", at: value.span)
        }
    }

    /// Every node under `nodes:`. Names are read first, so that a node may
    /// need one defined later; each node's problems are tagged with its
    /// name, so that a problem in an anchor merged into many nodes is shown once.
    private mutating func nodes(_ nodesPair: YAMLNode.Pair, into graph: inout GraphDeclaration) {
        let value = nodesPair.value
        if value.isNull {
            values.error("'nodes' is empty; add at least one node", at: nodesPair.key.span)
            return
        }
        guard let pairs = values.mapping(value, expecting: "a mapping of node names to nodes") else { return }
        if pairs.isEmpty { values.warning("the graph has no nodes", at: value.span) }

        var accepted: [(name: String, pair: YAMLNode.Pair)] = []
        accepted.reserveCapacity(pairs.count)
        graph.nodeIndex.reserveCapacity(pairs.count)
        var dedented = Set<String>()
        var owner: String?
        for pair in pairs {
            guard let name = values.keyName(pair.key) else { continue }
            if let owner, NodeDecoder.isDedentedKey(name, value: pair.value) {
                values.error("'\(name)' looks like a key of node '\(owner)' indented at the node-name level; indent it under '\(owner)'",
                             at: pair.key.span, notes: ["help: a node's keys (run, needs, sources, …) are indented further than its name"])
                dedented.insert(owner)
                continue
            }
            owner = name
            guard Node.isValidName(name) else {
                values.error("invalid node name '\(name)'; \(Node.nameRule)", at: pair.key.span)
                continue
            }
            guard graph.nodeIndex[name] == nil else {
                values.error("node '\(name)' is defined twice; rename or remove one", at: pair.key.span)
                continue
            }
            graph.nodeIndex[name] = accepted.count
            accepted.append((name, pair))
        }

        var decoder = NodeDecoder(queues: graph.queues, defaults: graph.defaults)
        graph.nodes.reserveCapacity(accepted.count)
        graph.references.reserveCapacity(accepted.count)
        for entry in accepted {
            let found = values.diagnostics.count
            // Its dedented key said what is wrong; "nothing to do" would only repeat it.
            decoder.keyDedented = dedented.contains(entry.name)
            let (node, references) = decoder.decode(entry.name, pair: entry.pair, &values)
            graph.nodes.append(node)
            graph.references.append(references)
            values.tag(from: found, node: entry.name)
        }
        for (t, references) in graph.references.enumerated() {
            for need in references.pathNeeds { pathNeed(need, of: graph.nodes[t].name, nodes: graph.nodes) }
        }
    }

    /// `needs: [out/counts]`: needs name nodes; the node whose `generates`
    /// write that path (or below it) is the one to need.
    private mutating func pathNeed(_ need: NodeReferences.Need, of name: String, nodes: [Node]) {
        let path = need.name.hasSuffix("/") ? String(need.name.dropLast()) : need.name
        let writer = nodes.first { node in
            node.generates.contains { $0 == path || $0.hasPrefix(path + "/") || path.hasPrefix($0 + "/") }
        }
        let help = writer.map { "help: node '\($0.name)' generates it: write needs: [\($0.name)], and '\(need.name)' in the sources of '\(name)' if it reads it" }
            ?? "help: a file a node reads goes in its 'sources'; to wait for the node that writes it, need that node by name"
        values.error("needs names nodes, not files: '\(need.name)' is a path", at: need.span, notes: [help])
        values.tag(from: values.diagnostics.count - 1, node: name)
    }

    /// One name, or a list of names, where each is written.
    private mutating func names(_ value: YAMLNode, expecting: String) -> [NodeReferences.Need] {
        let items: [YAMLNode]
        switch value.kind {
        case .scalar: items = [value]
        case .sequence(let list): items = Array(list)
        case .mapping:
            values.error("expected \(expecting), found a mapping", at: value.span)
            items = []
        }
        return items.compactMap { item in
            values.string(item, expecting: "a node name", allowNull: false).map { NodeReferences.Need(name: $0, node: item) }
        }
    }

    /// `includes: {NAME: PATH}` or `{NAME: {file, vars}}`.
    private mutating func includes(_ value: YAMLNode) -> [IncludeDeclaration] {
        guard let pairs = values.mapping(value, expecting: "a mapping of include names to graph files") else { return [] }
        var result: [IncludeDeclaration] = []
        for pair in pairs {
            guard let name = values.keyName(pair.key) else { continue }
            guard Node.isValidName(name) else {
                values.error("invalid include name '\(name)'; \(Node.nameRule)", at: pair.key.span)
                continue
            }
            if result.contains(where: { $0.name == name }) {
                values.error("include '\(name)' is defined twice; rename or remove one", at: pair.key.span)
                continue
            }
            var file: (String, SourceSpan)?
            var vars = Variables()
            if let body = pair.value.pairs {
                let keys = values.checkKeys(body, allowed: GraphKeys.include, context: "in include '\(name)'")
                if let f = keys["file"], let path = values.string(f.value, expecting: "the path of a graph file", allowNull: false) {
                    file = (path, f.value.span)
                } else if keys["file"] == nil {
                    values.error("include '\(name)' needs 'file' (the path of a graph file)", at: pair.key.span)
                }
                if let v = keys["vars"] { vars = values.variables(v.value, what: "variable", nameRule: .variable, allowLists: true) }
            } else if let path = values.string(pair.value, expecting: "the path of a graph file, or {file, vars}", allowNull: false) {
                file = (path, pair.value.span)
            }
            guard let (path, span) = file else { continue }
            if path.isEmpty {
                values.error("the path of include '\(name)' is empty; write a graph file such as lib/moon.yaml", at: span)
                continue
            }
            result.append(IncludeDeclaration(name: name, nameSpan: pair.key.span, file: path, fileSpan: span, vars: vars))
        }
        return result
    }

    /// `dotenv: .env`, or a list of paths and `{path, optional}` mappings.
    private mutating func dotenv(_ node: YAMLNode) -> [DotenvFile] {
        if node.isNull { return [] }
        let items: [YAMLNode]
        switch node.kind {
        case .scalar, .mapping: items = [node]
        case .sequence(let list): items = Array(list)
        }
        var files: [DotenvFile] = []
        for item in items {
            if let pairs = item.pairs {
                let keys = values.checkKeys(pairs, allowed: GraphKeys.dotenv, context: "in a dotenv entry")
                guard let p = keys["path"], let path = values.string(p.value, expecting: "the path of a dotenv file", allowNull: false) else {
                    if keys["path"] == nil { values.error("a dotenv entry needs 'path'", at: item.span) }
                    continue
                }
                let optional = keys["optional"].flatMap { values.bool($0.value, key: "optional") } ?? false
                if path.isEmpty { values.error("the path of a dotenv file is empty", at: p.value.span); continue }
                files.append(DotenvFile(path: path, optional: optional, span: p.value.span))
            } else if let path = values.string(item, expecting: "the path of a dotenv file, or {path, optional}", allowNull: false) {
                if path.isEmpty { values.error("the path of a dotenv file is empty", at: item.span); continue }
                files.append(DotenvFile(path: path, optional: false, span: item.span))
            }
        }
        return files
    }
}
