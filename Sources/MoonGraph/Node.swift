import MoonCommand
import MoonDocument

/// One node of a validated graph, with the graph's defaults already applied.
public struct Node: Sendable {
    /// The fields live in one shared, copy-on-write object: a node is copied
    /// whole in many places (the plan, the runner, each attempt's command),
    /// and a copy of ~20 fields was ~17 reference-count operations; now it
    /// is one. Reading a field is unchanged; writing copies the fields first
    /// when another node value shares them.
    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields {
        var name: String
        var nameSpan: SourceSpan
        var description: String?
        var needs: [Int]
        var action: NodeAction
        var env: Variables
        var dir: String?
        var queue: Int
        var timeout: Duration?
        var retry: RetryPolicy
        var condition: RunCondition
        var continueOnError: Bool
        var shell: Shell
        var slurm: SlurmOptions
        var sources: [String] = []
        var generates: [String] = []
        var depfile: String?
        var span: SourceSpan
    }

    private var storage: Storage

    /// The fields, unshared before a write.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            return storage
        }
    }

    public var name: String {
        get { storage.fields.name }
        _modify { yield &unique.fields.name }
        set { unique.fields.name = newValue }
    }

    /// The span of the node's name (its key under `nodes:`); diagnostics about the node point here.
    public var nameSpan: SourceSpan {
        get { storage.fields.nameSpan }
        _modify { yield &unique.fields.nameSpan }
        set { unique.fields.nameSpan = newValue }
    }

    public var description: String? {
        get { storage.fields.description }
        _modify { yield &unique.fields.description }
        set { unique.fields.description = newValue }
    }

    /// Indices into `Graph.nodes`, in the order written, without duplicates or self.
    public var needs: [Int] {
        get { storage.fields.needs }
        _modify { yield &unique.fields.needs }
        set { unique.fields.needs = newValue }
    }


    public var action: NodeAction {
        get { storage.fields.action }
        _modify { yield &unique.fields.action }
        set { unique.fields.action = newValue }
    }

    /// The node's own `env:`; `Graph.environment(for:)` layers it over the graph's.
    public var env: Variables {
        get { storage.fields.env }
        _modify { yield &unique.fields.env }
        set { unique.fields.env = newValue }
    }

    /// `dir:` as written (relative to the graph file's directory); see `Graph.workingDirectory(for:)`.
    public var dir: String? {
        get { storage.fields.dir }
        _modify { yield &unique.fields.dir }
        set { unique.fields.dir = newValue }
    }

    /// Index into `Graph.queues`.
    public var queue: Int {
        get { storage.fields.queue }
        _modify { yield &unique.fields.queue }
        set { unique.fields.queue = newValue }
    }

    public var timeout: Duration? {
        get { storage.fields.timeout }
        _modify { yield &unique.fields.timeout }
        set { unique.fields.timeout = newValue }
    }

    public var retry: RetryPolicy {
        get { storage.fields.retry }
        _modify { yield &unique.fields.retry }
        set { unique.fields.retry = newValue }
    }

    public var condition: RunCondition {
        get { storage.fields.condition }
        _modify { yield &unique.fields.condition }
        set { unique.fields.condition = newValue }
    }

    public var continueOnError: Bool {
        get { storage.fields.continueOnError }
        _modify { yield &unique.fields.continueOnError }
        set { unique.fields.continueOnError = newValue }
    }

    public var shell: Shell {
        get { storage.fields.shell }
        _modify { yield &unique.fields.shell }
        set { unique.fields.shell = newValue }
    }

    /// The node's own `slurm:` overrides (empty when none); see `Graph.slurmOptions(for:)`.
    public var slurm: SlurmOptions {
        get { storage.fields.slurm }
        _modify { yield &unique.fields.slurm }
        set { unique.fields.slurm = newValue }
    }

    /// `sources:` globs, relative to the graph file's directory; a node with
    /// sources is skipped when it is up to date (see MoonState).
    public var sources: [String] {
        get { storage.fields.sources }
        _modify { yield &unique.fields.sources }
        set { unique.fields.sources = newValue }
    }

    /// `generates:` globs, relative to the graph file's directory; each must
    /// match something for the node to be up to date.
    public var generates: [String] {
        get { storage.fields.generates }
        _modify { yield &unique.fields.generates }
        set { unique.fields.generates = newValue }
    }

    /// `depfile:` as written: a Makefile-style dependency file the node's
    /// command writes (`gcc -MD -MF`), relative to the node's `dir`; after a
    /// success the files it lists count as further sources.
    public var depfile: String? {
        get { storage.fields.depfile }
        _modify { yield &unique.fields.depfile }
        set { unique.fields.depfile = newValue }
    }

    /// The span of the node's whole definition.
    public var span: SourceSpan {
        get { storage.fields.span }
        _modify { yield &unique.fields.span }
        set { unique.fields.span = newValue }
    }

    public init(name: String, nameSpan: SourceSpan, description: String? = nil, needs: [Int] = [],
                action: NodeAction, env: Variables = Variables(),
                dir: String? = nil, queue: Int = 0, timeout: Duration? = nil, retry: RetryPolicy = .none,
                condition: RunCondition = .success, continueOnError: Bool = false, shell: Shell = .sh,
                slurm: SlurmOptions = SlurmOptions(), span: SourceSpan? = nil) {
        storage = Storage(Fields(name: name, nameSpan: nameSpan, description: description, needs: needs,
                                 action: action, env: env, dir: dir, queue: queue, timeout: timeout, retry: retry,
                                 condition: condition, continueOnError: continueOnError, shell: shell, slurm: slurm,
                                 span: span ?? nameSpan))
    }

    /// Whether `name` is a valid node name: `[A-Za-z0-9_][A-Za-z0-9_.+-]*`.
    public static func isValidName(_ name: String) -> Bool {
        var first = true
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                break
            case UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"):
                if first { return false }
            default:
                return false
            }
            first = false
        }
        return !first
    }
}
