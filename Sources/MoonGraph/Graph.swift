import MoonDocument

/// A decoded and validated graph file: names unique, needs known, acyclic,
/// queues known, defaults applied. Plain values; no I/O.
public struct Graph: Sendable {
    /// `name:`, or the file's stem (`release.yaml` -> `release`).
    public var name: String
    public var description: String?
    /// The graph file's path, as given.
    public var path: String
    /// The directory of the graph file (`.` for a bare file name); node `dir:`s are relative to it.
    public var directory: String
    /// `vars:` after `--set` overrides, in file order (overrides of new names last).
    public var vars: Variables
    /// The graph-wide `env:`.
    public var env: Variables
    /// The `dotenv:` files, in order (read by `loadDotenv(reading:)`, not by the decoder).
    public var dotenv: [DotenvFile] = []
    /// What the `dotenv:` files set, later files over earlier ones; empty until `loadDotenv` reads them.
    /// A node's environment is: these, then moon's own environment, then `env`, then the node's `env`.
    public var dotenvValues = Variables()
    /// `cache:`: the output cache's directory, remote and key.
    public var cache = CacheSettings()
    /// `secrets:`: where each secret's value comes from (never the value).
    public var secrets: [SecretDeclaration] = []
    /// Every queue; `queues[0]` is always `default`, the others follow in file order.
    public var queues: [QueueSpec]
    public var defaults: NodeDefaults
    /// Every node, in file order; the instances of a `for-each` or `matrix`
    /// template stand where the template is written, in item order.
    public var nodes: [Node]
    /// `default:`: the names `moon run` (and plain `moon`) run when none is
    /// given; empty when the file has none. Each is a node, a template or a group.
    public var defaultTargets: [String] = []
    /// For an included file: its `:NAME` needs, which only the root graph
    /// resolves (`RootNeeds`); empty for the graph `moon` reads.
    public var rootNeeds: [RootNeed] = []
    private var positions: [String: Int]
    /// Template name -> the indices of its instances, in order.
    private var templates: [String: [Int]]

    public init(name: String, description: String? = nil, path: String, vars: Variables = Variables(),
                env: Variables = Variables(), queues: [QueueSpec] = [QueueSpec(name: QueueSpec.defaultName)],
                defaults: NodeDefaults = NodeDefaults(), nodes: [Node]) {
        self.name = name
        self.description = description
        self.path = path
        self.directory = Graph.directory(of: path)
        self.vars = vars
        self.env = env
        self.queues = queues
        self.defaults = defaults
        self.nodes = nodes
        var positions: [String: Int] = [:]
        positions.reserveCapacity(nodes.count)
        var templates: [String: [Int]] = [:]
        for i in nodes.indices {
            // A barrier is named as its template, which names the instances.
            if nodes[i].isBarrier { continue }
            if positions[nodes[i].name] == nil { positions[nodes[i].name] = i }
            if let template = nodes[i].instance?.template { templates[template, default: []].append(i) }
        }
        self.positions = positions
        self.templates = templates
    }

    /// The index of the node called `name` (an instance by its full name, `obj[src/a.c]`).
    public func index(of name: String) -> Int? { positions[name] }

    /// The indices of the instances of the `for-each`/`matrix` template
    /// `template`, in order; empty when it is not a static template.
    public func instances(of template: String) -> [Int] { templates[template] ?? [] }

    /// Whether `name` is a static template (it names its instances, not a node).
    public func isTemplate(_ name: String) -> Bool { templates[name] != nil }

    /// The template names, in the order of their first instance.
    public var templateNames: [String] {
        templates.sorted { $0.value[0] < $1.value[0] }.map(\.key)
    }

    /// What a name given by a user stands for: the node of that name, or
    /// every instance of the template of that name; nil when neither.
    public func targets(named name: String) -> [Int]? {
        if let index = positions[name] { return [index] }
        return templates[name]
    }

    /// What a target given to `moon run` selects: a node, a template's
    /// instances, or the nodes a pattern matches (`test[*]`); throws for a
    /// name that is none of these, or an internal node named directly.
    public func targets(for target: String) throws(Diagnostics) -> [Int] {
        if NamePattern.isPattern(target) {
            let matched = nodes(matching: target)
            guard !matched.isEmpty else { throw Diagnostics([.error("no node matches '\(target)'", at: nil)]) }
            return matched
        }
        guard let indices = targets(named: target) else { throw Diagnostics([unknownTarget(target)]) }
        if indices.count == 1, nodes[indices[0]].isInternal, !defaultTargets.contains(target) {
            throw Diagnostics([.error("node '\(target)' is internal: it runs only as a need of another node", at: nil)])
        }
        return indices
    }

    /// "unknown node 'x' (did you mean 'y'?)".
    public func unknownTarget(_ target: String) -> Diagnostic {
        if NamePattern.isPattern(target) { return .error("no node matches '\(target)'", at: nil) }
        if let indices = targets(named: target), indices.count == 1, nodes[indices[0]].isInternal {
            return .error("node '\(target)' is internal: it runs only as a need of another node", at: nil)
        }
        let names = templateNames + nodes.lazy.filter { !$0.isInternal }.map(\.name)
        return .error("unknown node '\(target)'\(Suggestion.clause(for: target, in: names))", at: nil)
    }

    /// The nodes whose names match `pattern`, a glob where `*` matches any
    /// run of characters (including `:`, `/` and brackets) and `?` one
    /// character; every other character, `[` and `]` included, is itself, so
    /// `test[*]` is every instance of `test` and `lib:*` every node of the
    /// include `lib`. Internal nodes never match.
    public func nodes(matching pattern: String) -> [Int] {
        let glob = Array(pattern.unicodeScalars)
        return nodes.indices.filter { !nodes[$0].isInternal && NamePattern.matches(glob, Array(nodes[$0].name.unicodeScalars)) }
    }

    /// The node called `name`.
    public subscript(name: String) -> Node? { positions[name].map { nodes[$0] } }

    /// The index of the queue called `name`.
    public func queueIndex(of name: String) -> Int? { queues.firstIndex { $0.name == name } }

    /// The queue a node runs on.
    public func queue(of node: Node) -> QueueSpec { queues[node.queue] }

    /// The graph's `env:` with the node's own `env:` over it.
    public func environment(for node: Node) -> Variables { env.merging(node.env) }

    /// The directory the node runs in: its `dir:` resolved against the graph file's directory.
    public func workingDirectory(for node: Node) -> String {
        guard let dir = node.dir, !dir.isEmpty else { return directory }
        if dir.hasPrefix("/") || directory == "." { return dir }
        return directory.hasSuffix("/") ? directory + dir : directory + "/" + dir
    }

    /// The Slurm options a node runs with (its queue's, overridden by its own),
    /// or nil when its queue runs locally. Without `mem:` or `cpus-per-task:`,
    /// its `resources:` ask for them. Without a `time:`, a node with a
    /// `timeout:` asks for that and a minute more: moon (or coreutils'
    /// `timeout` in an export) ends it exactly, before Slurm's whole-minute
    /// limit would, and Slurm can still plan around the limit.
    public func slurmOptions(for node: Node) -> SlurmOptions? {
        queues[node.queue].slurm.map { $0.overridden(by: node.slurm).requesting(node.resources).limited(by: node.timeout) }
    }

    /// For each node, the indices of the nodes that need it, in file order.
    public func dependents() -> [[Int]] {
        var result = [[Int]](repeating: [], count: nodes.count)
        for (i, node) in nodes.enumerated() {
            for need in node.needs { result[need].append(i) }
        }
        return result
    }

    /// `release.yaml` -> `release`; `dir/moon.yml` -> `moon`.
    public static func stem(of path: String) -> String {
        var base = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
        for ext in [".yaml", ".yml"] where base.hasSuffix(ext) && base.count > ext.count {
            base.removeLast(ext.count)
            break
        }
        return base
    }

    /// `a/b/moon.yaml` -> `a/b`; `moon.yaml` -> `.`; `/moon.yaml` -> `/`.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }
}

/// Coded field by field in `CodingKeys` order; the name and template
/// indexes are rebuilt from `nodes`, as `init` builds them.
/// `BinaryCodingTests` checks that `CodingKeys` names every other stored property.
extension Graph: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, path, directory, vars, env, dotenv, dotenvValues, cache, secrets, queues, defaults, nodes,
             defaultTargets, rootNeeds
    }

    /// The stored properties `CodingKeys` leaves out, since they are derived.
    static let derivedProperties: Set<String> = ["positions", "templates"]

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .name)
        let description = try c.decodeIfPresent(String.self, forKey: .description)
        let path = try c.decode(String.self, forKey: .path)
        let directory = try c.decode(String.self, forKey: .directory)
        let vars = try c.decode(Variables.self, forKey: .vars)
        let env = try c.decode(Variables.self, forKey: .env)
        let dotenv = try c.decode([DotenvFile].self, forKey: .dotenv)
        let dotenvValues = try c.decode(Variables.self, forKey: .dotenvValues)
        let cache = try c.decode(CacheSettings.self, forKey: .cache)
        let secrets = try c.decode([SecretDeclaration].self, forKey: .secrets)
        let queues = try c.decode([QueueSpec].self, forKey: .queues)
        let defaults = try c.decode(NodeDefaults.self, forKey: .defaults)
        let nodes = try c.decode([Node].self, forKey: .nodes)
        self.init(name: name, description: description, path: path, vars: vars, env: env, queues: queues, defaults: defaults, nodes: nodes)
        self.directory = directory
        self.dotenv = dotenv
        self.dotenvValues = dotenvValues
        self.cache = cache
        self.secrets = secrets
        defaultTargets = try c.decode([String].self, forKey: .defaultTargets)
        rootNeeds = try c.decode([RootNeed].self, forKey: .rootNeeds)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(description, forKey: .description)
        try c.encode(path, forKey: .path)
        try c.encode(directory, forKey: .directory)
        try c.encode(vars, forKey: .vars)
        try c.encode(env, forKey: .env)
        try c.encode(dotenv, forKey: .dotenv)
        try c.encode(dotenvValues, forKey: .dotenvValues)
        try c.encode(cache, forKey: .cache)
        try c.encode(secrets, forKey: .secrets)
        try c.encode(queues, forKey: .queues)
        try c.encode(defaults, forKey: .defaults)
        try c.encode(nodes, forKey: .nodes)
        try c.encode(defaultTargets, forKey: .defaultTargets)
        try c.encode(rootNeeds, forKey: .rootNeeds)
    }
}
