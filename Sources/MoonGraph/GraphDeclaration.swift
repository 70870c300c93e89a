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
    var secrets: [SecretDeclaration] = []
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
    /// `vars:` as written, whose values may use other vars.
    var varsValue: YAMLNode?
    /// The names under `default:`, where they are written.
    var defaultTargets: [NodeReferences.Need] = []
    /// `includes:`, in the order written.
    var includes: [IncludeDeclaration] = []
}

/// One entry of `includes:`: `NAME: PATH` or `NAME: {file, vars}`.
struct IncludeDeclaration {
    var name: String
    var nameSpan: SourceSpan
    /// The path as written, relative to the including file's directory.
    var file: String
    var fileSpan: SourceSpan
    /// Values for the included file's vars, over its own.
    var vars: Variables
}

/// How a node fans out, as written.
enum FanOutDeclaration {
    /// `for-each: [a, b]`.
    case list([(item: String, span: SourceSpan)], span: SourceSpan)
    /// `for-each: {glob, exclude, allow-empty}`.
    case glob(pattern: String, exclude: [String], allowEmpty: Bool, span: SourceSpan)
    /// `for-each: ${{ needs.NODE.outputs.KEY }}`.
    case dynamic(node: String, key: String, span: SourceSpan)
    /// `matrix: {KEY: [VALUE, …], include, exclude}`.
    case matrix(MatrixDeclaration)
}

/// `matrix:` as written: the keys with their values in order, and the
/// `include`/`exclude` entries (GitHub Actions' rules).
struct MatrixDeclaration {
    var keys: [String] = []
    var values: [[String]] = []
    var include: [Variables] = []
    var exclude: [Variables] = []
    var span: SourceSpan

    /// Every key an instance may read: the matrix's, then new ones from `include`.
    var allKeys: [String] {
        var keys = self.keys
        for entry in include { for name in entry.names where !keys.contains(name) { keys.append(name) } }
        return keys
    }
}

/// What a decoded node refers to, for the analyzer: the names under its
/// `needs`, and the values whose `${{ … }}` read vars and needs.
struct NodeReferences {
    /// One name under `needs:`, where it is written (the scalar itself:
    /// most needs never need their span).
    struct Need {
        var name: String
        var node: YAMLNode
        var span: SourceSpan { node.span }
    }

    var needs: [Need] = []
    /// Needs written `:NAME`: nodes of the root graph (`RootNeeds`).
    var rootNeeds: [Need] = []
    /// Needs written as paths (`out/counts`): each an error, which names
    /// the node that generates the path when one does.
    var pathNeeds: [Need] = []
    /// `run:` as written; a shell-form script is checked with its shell's quoting.
    var run: YAMLNode?
    var env: YAMLNode?
    var with: YAMLNode?
    var dir: YAMLNode?
    /// `sources`, `generates` and `depfile` as written: they may read vars, item and matrix.
    var sources: YAMLNode?
    var generates: YAMLNode?
    var depfile: YAMLNode?
    /// `for-each` or `matrix`, when the node has one.
    var fanOut: FanOutDeclaration?
}
