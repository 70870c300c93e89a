import MoonCommand
import MoonDocument

/// One node of a validated graph, with the graph's defaults already applied.
public struct Node: Sendable, Codable {
    public var name: String
    /// The span of the node's name (its key under `nodes:`); diagnostics about the node point here.
    public var nameSpan: SourceSpan
    /// Indices into `Graph.nodes`, in the order written, without duplicates or self.
    public var needs: [Int]
    public var action: NodeAction
    /// The node's own `env:`; `Graph.environment(for:)` layers it over the graph's.
    public var env: Variables
    /// `dir:` as written (relative to the graph file's directory); see `Graph.workingDirectory(for:)`.
    public var dir: String?
    /// Index into `Graph.queues`.
    public var queue: Int
    public var timeout: Duration?
    public var retry: RetryPolicy
    public var condition: RunCondition
    public var continueOnError: Bool
    public var shell: Shell
    /// `sources:` globs, relative to the graph file's directory; a node with
    /// sources is skipped when it is up to date (see MoonState).
    public var sources: [String] = []
    /// `generates:` globs, relative to the graph file's directory; each must
    /// match something for the node to be up to date.
    public var generates: [String] = []
    /// `depfile:` as written: a Makefile-style dependency file the node's
    /// command writes (`gcc -MD -MF`), relative to the node's `dir`; after a
    /// success the files it lists count as further sources.
    public var depfile: String?
    /// `cache: false` opts the node out of the output cache.
    public var cached = true
    /// The span of the node's whole definition.
    public var span: SourceSpan
    /// The settings most nodes leave empty, out of line: the decoder, the
    /// analyzer and the plan copy every node, and one shared reference
    /// copies in one retain where these fields took a dozen.
    private var rare = Rare.none

    public var description: String? {
        get { rare.fields.description }
        set { update { $0.description = newValue } }
    }
    /// The node's own `slurm:` overrides (empty when none); see `Graph.slurmOptions(for:)`.
    public var slurm: SlurmOptions {
        get { rare.fields.slurm }
        set { update { $0.slurm = newValue } }
    }
    /// Set on each instance of a `for-each` or `matrix` template (the node
    /// is then `template[label]`); nil for any other node.
    public var instance: NodeInstance? {
        get { rare.fields.instance }
        set { update { $0.instance = newValue } }
    }
    /// `for-each: ${{ needs.X.outputs.KEY }}`: a template expanded at run time; nil otherwise.
    public var fanOut: DynamicFanOut? {
        get { rare.fields.fanOut }
        set { update { $0.fanOut = newValue } }
    }
    /// `params:` in the order written.
    public var params: [NodeParameter] {
        get { rare.fields.params }
        set { update { $0.params = newValue } }
    }
    /// What the command line gave the node (`Graph.bind`); empty until then.
    public var arguments: NodeArguments {
        get { rare.fields.arguments }
        set { update { $0.arguments = newValue } }
    }
    /// `internal: true`: hidden from `moon list` and from selection by name or pattern.
    public var isInternal: Bool {
        get { rare.fields.isInternal }
        set { update { $0.isInternal = newValue } }
    }
    /// An internal node the loader adds where a fan-out needs a whole
    /// static fan-out (`needs: [text]`): it needs every instance of the
    /// template and each instance of the needer needs it alone, so the edges
    /// are N + M, not N × M. Named as the template; it runs nothing, and a
    /// run emits no event for it.
    public var isBarrier: Bool {
        get { rare.fields.isBarrier }
        set { update { $0.isBarrier = newValue } }
    }
    /// `service: true`: a node not expected to end (a dev server); its
    /// dependents start once it has started, and moon stops it at the end.
    public var isService: Bool {
        get { rare.fields.isService }
        set { update { $0.isService = newValue } }
    }
    /// `restart:`: whether watch mode restarts the node when its inputs
    /// change while it runs (`on-change`, the default), or leaves it
    /// running (`never`, for a service that reloads by itself).
    public var restartsOnChange: Bool {
        get { rare.fields.restartsOnChange }
        set { update { $0.restartsOnChange = newValue } }
    }
    /// For a node of an included file: the include names before its own
    /// (`lib:`, `a:b:`), which its `${{ needs.NAME… }}` are read under; "" otherwise.
    public var namespace: String {
        get { rare.fields.namespace }
        set { update { $0.namespace = newValue } }
    }
    /// `priority:`: among ready nodes, a higher one starts first, before the
    /// critical path decides (see `Plan.schedulingPriority`); 0 unless set.
    public var priority: Int {
        get { rare.fields.priority }
        set { update { $0.priority = newValue } }
    }
    /// `success-codes:`: the exit codes that count as success (pytest's 5,
    /// "no tests collected"); `defaultSuccessCodes` unless set.
    public static let defaultSuccessCodes: [Int32] = [0]
    public var successCodes: [Int32] {
        get { rare.fields.successCodes }
        set { update { $0.successCodes = newValue } }
    }
    /// `resources:` (over `defaults:`): what it needs to start; empty unless set.
    public var resources: ResourceSpec {
        get { rare.fields.resources }
        set { update { $0.resources = newValue } }
    }
    /// For a node of an included file: that file's vars, which its
    /// `${{ vars.NAME }}` read; nil for the graph file's own nodes (`Graph.vars`).
    public var vars: Variables? {
        get { rare.fields.vars }
        set { update { $0.vars = newValue } }
    }
    /// `interactive: true`: the node gets moon's terminal (stdin, and on
    /// the live view stdout and stderr too), one such node at a time.
    public var isInteractive: Bool {
        get { rare.fields.isInteractive }
        set { update { $0.isInteractive = newValue } }
    }
    /// `confirm:`: the question asked (y/N) before the node starts; nil when none.
    public var confirm: String? {
        get { rare.fields.confirm }
        set { update { $0.confirm = newValue } }
    }

    /// Sets every rare field at once, in one box (`GraphBinary`).
    mutating func setRare(description: String?, slurm: SlurmOptions, instance: NodeInstance?, fanOut: DynamicFanOut?,
                          params: [NodeParameter], arguments: NodeArguments, isInternal: Bool, isBarrier: Bool, isService: Bool,
                          restartsOnChange: Bool, namespace: String, vars: Variables?, successCodes: [Int32], priority: Int,
                          isInteractive: Bool, confirm: String?) {
        rare = Rare(RareFields(description: description, slurm: slurm, instance: instance, fanOut: fanOut, params: params,
                               arguments: arguments, isInternal: isInternal, isBarrier: isBarrier, isService: isService,
                               restartsOnChange: restartsOnChange, namespace: namespace, vars: vars, successCodes: successCodes,
                               priority: priority, isInteractive: isInteractive, confirm: confirm))
    }

    /// Writes the rare fields into a box of this node's own: boxes are shared between copies and never change.
    private mutating func update(_ change: (inout RareFields) -> Void) {
        var fields = rare.fields
        change(&fields)
        rare = Rare(fields)
    }

    private struct RareFields: Sendable, Codable {
        var description: String?
        var slurm = SlurmOptions()
        var instance: NodeInstance?
        var fanOut: DynamicFanOut?
        var params: [NodeParameter] = []
        var arguments = NodeArguments()
        var isInternal = false
        var isBarrier = false
        var isService = false
        var restartsOnChange = true
        var namespace = ""
        var vars: Variables?
        var successCodes = Node.defaultSuccessCodes
        var priority = 0
        var resources = ResourceSpec()
        var isInteractive = false
        var confirm: String?
    }

    private final class Rare: Sendable, Codable {
        let fields: RareFields
        init(_ fields: RareFields) { self.fields = fields }
        // Coded as its fields, so that `Node`'s synthesized coding reaches every one of them.
        init(from decoder: Decoder) throws { fields = try RareFields(from: decoder) }
        func encode(to encoder: Encoder) throws { try fields.encode(to: encoder) }
        /// The empty fields every node starts with.
        static let none = Rare(RareFields())
    }

    public init(name: String, nameSpan: SourceSpan, description: String? = nil, needs: [Int] = [],
                action: NodeAction, env: Variables = Variables(),
                dir: String? = nil, queue: Int = 0, timeout: Duration? = nil, retry: RetryPolicy = .none,
                condition: RunCondition = .success, continueOnError: Bool = false, shell: Shell = .sh,
                slurm: SlurmOptions? = nil, span: SourceSpan? = nil) {
        self.name = name
        self.nameSpan = nameSpan
        self.needs = needs
        self.action = action
        self.env = env
        self.dir = dir
        self.queue = queue
        self.timeout = timeout
        self.retry = retry
        self.condition = condition
        self.continueOnError = continueOnError
        self.shell = shell
        self.span = span ?? nameSpan
        if description != nil { self.description = description }
        if let slurm { self.slurm = slurm }
    }

    /// The rule of `isValidName`, for messages about node and queue names.
    static let nameRule = "names start with a letter, digit or '_' and contain only letters, digits, '_', '.', '+' and '-'"

    /// Whether `name` names a node of this file or of an include: valid
    /// names joined by `:` (`core`, `lib:core`, `a:b:core`).
    public static func isValidReference(_ name: String) -> Bool {
        guard name.utf8.contains(UInt8(ascii: ":")) else { return isValidName(name) }
        return name.split(separator: ":", omittingEmptySubsequences: false).allSatisfy { isValidName(String($0)) }
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
