import MoonCommand
import MoonDocument

/// The compiled graph's fast form: `Graph` written and read field by field,
/// without `Codable`, whose generic containers cost the runtime a
/// conformance scan per coded type (tens of millions of instructions for one
/// graph). It cannot drift unnoticed: `fields` lists the stored properties
/// each struct here writes, and a test compares that list with each type's
/// reflection; a switch over each enum has no `default`; and a test loads
/// every graph of examples/ and of the tests, reads it back through this
/// form, and compares the two in `BinaryCoding`'s form, which the
/// synthesized `Codable` of every type drives.
public enum GraphBinary {
    /// The stored properties written per type, in order (`GraphBinaryTests` checks them against each type).
    static let fields: [String: [String]] = [
        "Graph": ["name", "description", "path", "directory", "vars", "env", "dotenv", "dotenvValues", "cache", "secrets", "queues",
                  "defaults", "nodes", "defaultTargets", "rootNeeds", "positions", "templates"],
        "Node": ["name", "nameSpan", "needs", "action", "env", "dir", "queue", "timeout", "retry", "condition", "continueOnError",
                 "shell", "sources", "generates", "depfile", "cached", "span", "rare"],
        "RareFields": ["description", "slurm", "instance", "fanOut", "params", "arguments", "isInternal", "isBarrier", "isService",
                       "restartsOnChange", "namespace", "vars", "successCodes", "priority", "resources", "isInteractive", "confirm"],
        "Variables": ["entries", "positions"],
        "Entry": ["name", "value", "items"],
        "DotenvFile": ["path", "optional", "span"],
        "CacheSettings": ["dir", "remote", "key"],
        "SecretDeclaration": ["name", "source", "required", "span"],
        "QueueSpec": ["name", "concurrency", "executor", "span"],
        "SlurmOptions": ["partition", "cpusPerTask", "mem", "time", "account", "args"],
        "NodeDefaults": ["queue", "timeout", "retry", "shell", "dir", "continueOnError", "condition", "successCodes", "resources"],
        "ResourceSpec": ["memory", "cpus"],
        "RetryPolicy": ["times", "delay", "backoff", "maxDelay"],
        "RootNeed": ["nodes", "name", "span"],
        "NodeInstance": ["template", "label", "item", "matrix"],
        "DynamicFanOut": ["need", "key"],
        "NodeParameter": ["name", "defaultValue", "required", "description", "span"],
        "NodeArguments": ["params", "args"],
        "SourceSpan": ["file", "start", "end"],
        "SourceLocation": ["storedLine", "storedColumn", "storedOffset"],
    ]

    public static func encode(_ graph: Graph) -> [UInt8] {
        var writer = Writer()
        writer.graph(graph)
        return writer.bytes
    }

    /// The graph `encode` wrote, which fills `bytes` exactly; throws on anything else.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Graph {
        var reader = Reader(bytes: bytes)
        let graph = try reader.graph()
        guard reader.offset == bytes.count else { throw reader.malformed }
        return graph
    }

    public struct Writer {
        public private(set) var bytes: [UInt8] = []
        public init() {}
        /// Strings written before, by index: a span's file name is written once.
        var table: [String: Int] = [:]

        public mutating func int(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { bytes.append(contentsOf: $0) } }
        public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
        public mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                int(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }
        mutating func shared(_ value: String) {
            if let index = table[value] { int(-1 - index); return }
            table[value] = table.count
            string(value)
        }
        mutating func optional<T>(_ value: T?, _ write: (inout Writer, T) -> Void) {
            guard let value else { bool(false); return }
            bool(true)
            write(&self, value)
        }
        public mutating func array<T>(_ values: [T], _ write: (inout Writer, T) -> Void) {
            int(values.count)
            for value in values { write(&self, value) }
        }
        public mutating func strings(_ values: [String]) { array(values) { $0.string($1) } }
        mutating func duration(_ value: Duration) {
            let (seconds, attoseconds) = value.components
            int(Int(seconds))
            withUnsafeBytes(of: attoseconds.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func graph(_ g: Graph) {
            string(g.name)
            optional(g.description) { $0.string($1) }
            string(g.path)
            string(g.directory)
            variables(g.vars)
            variables(g.env)
            array(g.dotenv) { w, d in
                w.string(d.path)
                w.bool(d.optional)
                w.optional(d.span) { $0.span($1) }
            }
            variables(g.dotenvValues)
            optional(g.cache.dir) { $0.string($1) }
            optional(g.cache.remote) { $0.string($1) }
            strings(g.cache.key)
            array(g.secrets) { w, s in
                w.string(s.name)
                switch s.source {
                case .environment(let variable): w.bool(false); w.string(variable)
                case .file(let path): w.bool(true); w.string(path)
                }
                w.bool(s.required)
                w.optional(s.span) { $0.span($1) }
            }
            array(g.queues) { $0.queue($1) }
            defaults(g.defaults)
            array(g.nodes) { $0.node($1) }
            strings(g.defaultTargets)
            array(g.rootNeeds) { w, need in
                w.int(need.nodes.lowerBound)
                w.int(need.nodes.upperBound)
                w.string(need.name)
                w.span(need.span)
            }
        }

        mutating func variables(_ v: Variables) {
            array(v.entries) { w, e in
                w.string(e.name)
                w.string(e.value)
                w.optional(e.items) { $0.strings($1) }
            }
        }

        mutating func span(_ s: SourceSpan) {
            shared(s.file)
            for location in [s.start, s.end] {
                int(location.line)
                int(location.column)
                int(location.offset)
            }
        }

        mutating func retry(_ r: RetryPolicy) {
            int(r.times)
            duration(r.delay)
            withUnsafeBytes(of: r.backoff.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            optional(r.maxDelay) { $0.duration($1) }
        }

        mutating func slurm(_ s: SlurmOptions) {
            optional(s.partition) { $0.string($1) }
            optional(s.cpusPerTask) { $0.int($1) }
            optional(s.mem) { $0.string($1) }
            optional(s.time) { $0.string($1) }
            optional(s.account) { $0.string($1) }
            strings(s.args)
        }

        mutating func queue(_ q: QueueSpec) {
            string(q.name)
            switch q.concurrency {
            case .auto: int(0)
            case .fixed(let n): int(1); int(n)
            }
            switch q.executor {
            case .local: int(0)
            case .slurm(let options): int(1); slurm(options)
            }
            optional(q.span) { $0.span($1) }
        }

        mutating func raw<T: CaseIterable & Equatable>(_ value: T) where T.AllCases == [T] { int(T.allCases.firstIndex(of: value)!) }

        mutating func codes(_ codes: [Int32]) { array(codes) { $0.int(Int($1)) } }

        mutating func defaults(_ d: NodeDefaults) {
            int(d.queue)
            optional(d.timeout) { $0.duration($1) }
            retry(d.retry)
            raw(d.shell)
            optional(d.dir) { $0.string($1) }
            bool(d.continueOnError)
            raw(d.condition)
            codes(d.successCodes)
            resources(d.resources)
        }

        mutating func action(_ a: NodeAction) {
            switch a {
            case .shell(let script): int(0); string(script)
            case .exec(let argv): int(1); strings(argv)
            case .builtin(let name, let with):
                int(2)
                string(name)
                let keys = with.keys.sorted()
                int(keys.count)
                for key in keys {
                    string(key)
                    switch with[key]! {
                    case .string(let s): int(0); string(s)
                    case .integer(let n): int(1); int(n)
                    case .duration(let d): int(2); duration(d)
                    case .path(let s): int(3); string(s)
                    case .choice(let s): int(4); string(s)
                    case .template(let s): int(5); string(s)
                    }
                }
            case .group: int(3)
            }
        }

        /// A node with every rare field at its default.
        static let plain = Node(name: "", nameSpan: SourceSpan(file: "", start: SourceLocation(line: 0, column: 0, offset: 0),
                                                                 end: SourceLocation(line: 0, column: 0, offset: 0)), action: .group)

        mutating func node(_ n: Node) {
            string(n.name)
            span(n.nameSpan)
            array(n.needs) { $0.int($1) }
            action(n.action)
            variables(n.env)
            optional(n.dir) { $0.string($1) }
            int(n.queue)
            optional(n.timeout) { $0.duration($1) }
            retry(n.retry)
            raw(n.condition)
            bool(n.continueOnError)
            raw(n.shell)
            strings(n.sources)
            strings(n.generates)
            optional(n.depfile) { $0.string($1) }
            bool(n.cached)
            span(n.span)
            // The rare fields: a flag, then each, only for a node with any set.
            let plain = Self.plain
            let hasRare = n.description != nil || n.slurm != plain.slurm || n.instance != nil || n.fanOut != nil || !n.params.isEmpty
                || n.arguments != plain.arguments || n.isInternal || n.isBarrier || n.isService || n.restartsOnChange != plain.restartsOnChange
                || n.namespace != plain.namespace || n.vars != nil || n.successCodes != plain.successCodes || n.priority != plain.priority
                || n.resources != plain.resources
                || n.isInteractive || n.confirm != nil
            bool(hasRare)
            guard hasRare else { return }
            optional(n.description) { $0.string($1) }
            slurm(n.slurm)
            optional(n.instance) { w, i in
                w.string(i.template)
                w.string(i.label)
                w.optional(i.item) { $0.string($1) }
                w.variables(i.matrix)
            }
            optional(n.fanOut) { w, f in
                w.int(f.need)
                w.string(f.key)
            }
            array(n.params) { w, p in
                w.string(p.name)
                w.optional(p.defaultValue) { $0.string($1) }
                w.bool(p.required)
                w.optional(p.description) { $0.string($1) }
                w.span(p.span)
            }
            let keys = n.arguments.params.keys.sorted()
            int(keys.count)
            for key in keys {
                string(key)
                string(n.arguments.params[key]!)
            }
            strings(n.arguments.args)
            bool(n.isInternal)
            bool(n.isBarrier)
            bool(n.isService)
            bool(n.restartsOnChange)
            string(n.namespace)
            optional(n.vars) { $0.variables($1) }
            codes(n.successCodes)
            int(n.priority)
            bool(n.isInteractive)
            optional(n.confirm) { $0.string($1) }
            resources(n.resources)
        }

        mutating func resources(_ r: ResourceSpec) {
            optional(r.memory) { $0.int(Int($1)) }
            optional(r.cpus) { $0.int($1) }
        }
    }

    public struct Reader {
        let bytes: UnsafeRawBufferPointer
        public private(set) var offset = 0
        var table: [String] = []

        public init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        public var malformed: BinaryCoding.Failure { BinaryCoding.Failure(description: "malformed compiled graph at byte \(offset)") }

        public mutating func int() throws -> Int {
            guard bytes.count - offset >= 8 else { throw malformed }
            defer { offset += 8 }
            return Int(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
        }
        public mutating func bool() throws -> Bool {
            guard offset < bytes.count, bytes[offset] <= 1 else { throw malformed }
            defer { offset += 1 }
            return bytes[offset] == 1
        }
        public mutating func count() throws -> Int {
            let n = try int()
            guard n >= 0, n <= bytes.count - offset else { throw malformed }
            return n
        }
        public mutating func string() throws -> String {
            let n = try count()
            defer { offset += n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n]), as: UTF8.self)
        }
        mutating func shared() throws -> String {
            let n = try int()
            if n < 0 {
                guard -1 - n < table.count else { throw malformed }
                return table[-1 - n]
            }
            offset -= 8
            let s = try string()
            table.append(s)
            return s
        }
        mutating func optional<T>(_ read: (inout Reader) throws -> T) throws -> T? {
            try bool() ? try read(&self) : nil
        }
        public mutating func array<T>(_ read: (inout Reader) throws -> T) throws -> [T] {
            let n = try count()
            var values: [T] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try read(&self)) }
            return values
        }
        public mutating func strings() throws -> [String] { try array { try $0.string() } }
        mutating func duration() throws -> Duration {
            let seconds = try int()
            guard bytes.count - offset >= 8 else { throw malformed }
            defer { offset += 8 }
            let attoseconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
            return Duration(secondsComponent: Int64(seconds), attosecondsComponent: attoseconds)
        }
        mutating func raw<T: CaseIterable>(_ type: T.Type) throws -> T where T.AllCases == [T] {
            let index = try int()
            guard T.allCases.indices.contains(index) else { throw malformed }
            return T.allCases[index]
        }

        mutating func graph() throws -> Graph {
            let name = try string()
            let description = try optional { try $0.string() }
            let path = try string()
            let directory = try string()
            let vars = try variables()
            let env = try variables()
            let dotenv = try array { r in
                DotenvFile(path: try r.string(), optional: try r.bool(), span: try r.optional { try $0.span() })
            }
            let dotenvValues = try variables()
            let cache = CacheSettings(dir: try optional { try $0.string() }, remote: try optional { try $0.string() }, key: try strings())
            let secrets = try array { r in
                let name = try r.string()
                let source: SecretDeclaration.Source = try r.bool() ? .file(try r.string()) : .environment(try r.string())
                return SecretDeclaration(name: name, source: source, required: try r.bool(), span: try r.optional { try $0.span() })
            }
            let queues = try array { try $0.queue() }
            let defaults = try self.defaults()
            let nodes = try array { try $0.node() }
            var graph = Graph(name: name, description: description, path: path, vars: vars, env: env, queues: queues, defaults: defaults,
                              nodes: nodes)
            graph.directory = directory
            graph.dotenv = dotenv
            graph.dotenvValues = dotenvValues
            graph.cache = cache
            graph.secrets = secrets
            graph.defaultTargets = try strings()
            graph.rootNeeds = try array { r in
                let lower = try r.int(), upper = try r.int()
                guard lower <= upper else { throw r.malformed }
                return RootNeed(nodes: lower..<upper, name: try r.string(), span: try r.span())
            }
            return graph
        }

        mutating func variables() throws -> Variables {
            Variables(entries: try array { r in
                Variables.Entry(name: try r.string(), value: try r.string(), items: try r.optional { try $0.strings() })
            })
        }

        mutating func location() throws -> SourceLocation {
            SourceLocation(line: try int(), column: try int(), offset: try int())
        }

        mutating func span() throws -> SourceSpan {
            SourceSpan(file: try shared(), start: try location(), end: try location())
        }

        mutating func retry() throws -> RetryPolicy {
            let times = try int(), delay = try duration()
            guard bytes.count - offset >= 8 else { throw malformed }
            let backoff = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
            return RetryPolicy(times: times, delay: delay, backoff: backoff, maxDelay: try optional { try $0.duration() })
        }

        mutating func slurm() throws -> SlurmOptions {
            SlurmOptions(partition: try optional { try $0.string() }, cpusPerTask: try optional { try $0.int() },
                         mem: try optional { try $0.string() }, time: try optional { try $0.string() },
                         account: try optional { try $0.string() }, args: try strings())
        }

        mutating func queue() throws -> QueueSpec {
            let name = try string()
            let concurrency: QueueSpec.Concurrency
            switch try int() {
            case 0: concurrency = .auto
            case 1: concurrency = .fixed(try int())
            default: throw malformed
            }
            let executor: QueueSpec.Executor
            switch try int() {
            case 0: executor = .local
            case 1: executor = .slurm(try slurm())
            default: throw malformed
            }
            return QueueSpec(name: name, concurrency: concurrency, executor: executor, span: try optional { try $0.span() })
        }

        mutating func resources() throws -> ResourceSpec {
            ResourceSpec(memory: try optional { Int64(try $0.int()) }, cpus: try optional { try $0.int() })
        }

        mutating func codes() throws -> [Int32] {
            try array { r in
                guard let code = Int32(exactly: try r.int()) else { throw r.malformed }
                return code
            }
        }

        mutating func defaults() throws -> NodeDefaults {
            var d = NodeDefaults()
            d.queue = try int()
            d.timeout = try optional { try $0.duration() }
            d.retry = try retry()
            d.shell = try raw(Shell.self)
            d.dir = try optional { try $0.string() }
            d.continueOnError = try bool()
            d.condition = try raw(RunCondition.self)
            d.successCodes = try codes()
            d.resources = try resources()
            return d
        }

        mutating func action() throws -> NodeAction {
            switch try int() {
            case 0: return .shell(try string())
            case 1: return .exec(try strings())
            case 2:
                let name = try string()
                var with: [String: BuiltinArgument] = [:]
                for _ in 0..<(try count()) {
                    let key = try string()
                    switch try int() {
                    case 0: with[key] = .string(try string())
                    case 1: with[key] = .integer(try int())
                    case 2: with[key] = .duration(try duration())
                    case 3: with[key] = .path(try string())
                    case 4: with[key] = .choice(try string())
                    case 5: with[key] = .template(try string())
                    default: throw malformed
                    }
                }
                return .builtin(name, with: with)
            case 3: return .group
            default: throw malformed
            }
        }

        mutating func node() throws -> Node {
            let name = try string()
            let nameSpan = try span()
            let needs = try array { try $0.int() }
            let action = try self.action()
            var node = Node(name: name, nameSpan: nameSpan, needs: needs, action: action, env: try variables(),
                            dir: try optional { try $0.string() }, queue: try int(), timeout: try optional { try $0.duration() },
                            retry: try retry())
            node.condition = try raw(RunCondition.self)
            node.continueOnError = try bool()
            node.shell = try raw(Shell.self)
            node.sources = try strings()
            node.generates = try strings()
            node.depfile = try optional { try $0.string() }
            node.cached = try bool()
            node.span = try span()
            guard try bool() else { return node }
            node.setRare(description: try optional { try $0.string() }, slurm: try slurm(),
                         instance: try optional { r in
                             NodeInstance(template: try r.string(), label: try r.string(), item: try r.optional { try $0.string() },
                                          matrix: try r.variables())
                         },
                         fanOut: try optional { r in DynamicFanOut(need: try r.int(), key: try r.string()) },
                         params: try array { r in
                             NodeParameter(name: try r.string(), defaultValue: try r.optional { try $0.string() }, required: try r.bool(),
                                           description: try r.optional { try $0.string() }, span: try r.span())
                         },
                         arguments: try arguments(), isInternal: try bool(), isBarrier: try bool(), isService: try bool(),
                         restartsOnChange: try bool(), namespace: try string(), vars: try optional { try $0.variables() },
                         successCodes: try codes(), priority: try int(),
                         isInteractive: try bool(), confirm: try optional { try $0.string() })
            let resources = try self.resources()
            if !resources.isEmpty { node.resources = resources }
            return node
        }

        mutating func arguments() throws -> NodeArguments {
            var params: [String: String] = [:]
            for _ in 0..<(try count()) {
                let key = try string()
                params[key] = try string()
            }
            return NodeArguments(params: params, args: try strings())
        }
    }
}
