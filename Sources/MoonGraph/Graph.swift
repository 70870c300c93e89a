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
    /// Every queue; `queues[0]` is always `default`, the others follow in file order.
    public var queues: [QueueSpec]
    public var defaults: NodeDefaults
    /// Every node, in file order.
    public var nodes: [Node]
    private var positions: [String: Int]

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
        for (i, node) in nodes.enumerated() where positions[node.name] == nil { positions[node.name] = i }
        self.positions = positions
    }

    /// The index of the node called `name`.
    public func index(of name: String) -> Int? { positions[name] }

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
    /// or nil when its queue runs locally.
    public func slurmOptions(for node: Node) -> SlurmOptions? {
        queues[node.queue].slurm.map { $0.overridden(by: node.slurm) }
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
