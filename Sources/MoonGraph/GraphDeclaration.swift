import MoonDocument

/// A graph file as the decoder reads it, before analysis: every value read
/// and typed, the defaults applied to the nodes, but names not yet resolved
/// against each other and `${{ … }}` not yet checked. `GraphAnalyzer` turns
/// it into a `Graph`.
struct GraphDeclaration {
    var name: String
    var description: String?
    var path: String
    /// `vars:` as written, before `--set`.
    var vars = Variables()
    var env = Variables()
    var dotenv: [DotenvFile] = []
    var cache = CacheSettings()
    var queues: [QueueSpec] = [QueueSpec(name: QueueSpec.defaultName)]
    var defaults = NodeDefaults()
    /// The nodes with valid, distinct names, in file order, without their
    /// `needs` (still names, in `references`).
    var nodes: [Node] = []
    /// What each node of `nodes` refers to, at the same position.
    var references: [NodeReferences] = []
    /// The position in `nodes` of each node's name.
    var nodeIndex: [String: Int] = [:]
    /// Every key under `nodes:`, valid or not, for messages about expressions.
    var nodeNames: [String] = []
    /// The graph's `env:` as written, whose values may hold expressions.
    var envValue: YAMLNode?
    /// `defaults: dir` as written, which may hold expressions.
    var defaultsDir: YAMLNode?
}

/// What a decoded node refers to, for the analyzer: the names under its
/// `needs`, and the values whose `${{ … }}` read vars and needs.
struct NodeReferences {
    /// One name under `needs:`, where it is written.
    struct Need {
        var name: String
        var span: SourceSpan
    }

    var needs: [Need] = []
    /// `run:` as written; a shell-form script is checked with its shell's quoting.
    var run: YAMLNode?
    var env: YAMLNode?
    var with: YAMLNode?
    var dir: YAMLNode?
}
