import Foundation
import MoonGraph
import MoonJSON

/// A node's fingerprint in named parts, so that `moon why` can say which
/// part changed: each input file (path, size, hash), each environment
/// variable (name and a digest of its value, never the value), each var it
/// reads, what each need left it, its patterns and its command's text.
/// Stored at each success whose full check ran (`node_why`, and in the
/// node's cache entry), as compact JSON; never on the no-op path.
public struct FingerprintParts: Sendable, Equatable {
    /// An environment variable, a var, or one of `cache: key:`'s parts.
    public struct Variable: Sendable, Equatable {
        /// `env`, `dotenv`, `cache-key` or `var`.
        public var kind: String
        public var name: String
        /// 16 hex digits of a digest of the name and value.
        public var digest: String
        /// The value: stored only for a var whose name does not look secret;
        /// for an environment variable, only in parts taken now (`moon why`
        /// shows a value from the current environment, never a stored one).
        public var value: String?
    }

    public struct Need: Sendable, Equatable {
        public var name: String
        public var result: String
        /// Each `$MOON_OUTPUT` key with a digest of its value.
        public var outputs: [Variable]
        /// A digest of its values ("" when it has none).
        public var values: String
    }

    public struct File: Sendable, Equatable {
        public var path: String
        public var size: Int64
        /// The first 16 hex digits of its content hash.
        public var hash: String
    }

    public var command: String
    public var environment: [Variable]
    public var vars: [Variable]
    public var needs: [Need]
    public var files: [File]
    public var patterns: [String]
    /// The run was forced (`--force`, `--force-only`).
    public var forced = false
    /// When the success was recorded (seconds since 1970); 0 in parts taken now.
    public var at: Double = 0
    /// The combined fingerprint's hex: tells parts that belong to the
    /// store's record from parts an older moon left behind.
    public var fingerprint = ""

    /// The digest `moon why` stores for a value: 16 hex digits of a
    /// labelled SHA-256 of the name and the value.
    static func digest(_ name: String, _ value: String) -> String {
        var digest = DigestBuilder("why-value")
        digest.add(name)
        digest.add(value)
        return digest.finish().hex(digits: 16)
    }

    // MARK: - JSON

    /// `seconds` with three decimals (`1700000000.250`), in integers:
    /// `String(format:)` costs the runtime a conformance search per process.
    static func seconds(_ seconds: Double) -> String {
        // JSON holds no NaN or infinity, and `Int64(_:)` traps on them.
        guard seconds.isFinite, seconds.magnitude < 9e15 else { return "0.000" }
        let milliseconds = Int64((seconds * 1000).rounded())
        let (whole, part) = milliseconds.magnitude.quotientAndRemainder(dividingBy: 1000)
        let digits = String(part)
        return (milliseconds < 0 ? "-" : "") + String(whole) + "." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    /// One line of JSON: `{"v":1,"at":…,"fingerprint":…,"forced":…,"command":…,
    /// "env":[[kind,name,digest(,value)]…],"vars":[…],"needs":[[name,result,values,[[key,digest]…]]…],
    /// "files":[[path,size,hash]…],"patterns":[…]}`.
    public var json: String {
        // Into bytes, one String at the end: a restore records the parts of every node it restores.
        var out: [UInt8] = []
        out.reserveCapacity(160 + command.utf8.count + fingerprint.utf8.count + files.count * 64 + patterns.count * 48
            + (environment.count + vars.count) * 64)
        func raw(_ text: StaticString) {
            out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        func string(_ s: String) { JSONString.quote(s, into: &out) }
        func strings(_ list: [String]) {
            out.append(UInt8(ascii: "["))
            for (i, s) in list.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                string(s)
            }
            out.append(UInt8(ascii: "]"))
        }
        func variables(_ list: [Variable]) {
            out.append(UInt8(ascii: "["))
            for (i, v) in list.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                strings([v.kind, v.name, v.digest] + (v.value.map { [$0] } ?? []))
            }
            out.append(UInt8(ascii: "]"))
        }
        raw("{\"v\":1,\"at\":")
        out.append(contentsOf: Self.seconds(at).utf8)
        raw(",\"fingerprint\":")
        string(fingerprint)
        out.append(contentsOf: (forced ? ",\"forced\":true" : ",\"forced\":false").utf8)
        raw(",\"command\":")
        string(command)
        raw(",\"env\":")
        variables(environment)
        raw(",\"vars\":")
        variables(vars)
        raw(",\"needs\":[")
        for (i, need) in needs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            string(need.name)
            out.append(UInt8(ascii: ","))
            string(need.result)
            out.append(UInt8(ascii: ","))
            string(need.values)
            raw(",[")
            for (j, output) in need.outputs.enumerated() {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                strings([output.name, output.digest])
            }
            raw("]]")
        }
        raw("],\"files\":[")
        for (i, file) in files.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            string(file.path)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: String(file.size).utf8)
            out.append(UInt8(ascii: ","))
            string(file.hash)
            out.append(UInt8(ascii: "]"))
        }
        raw("],\"patterns\":")
        strings(patterns)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parts read back from `json`; nil for text that is not such parts
    /// (a cache entry comes from anyone who can write to the cache: a
    /// malformed item is left out, nothing traps).
    public init?(json text: String) {
        guard let value = try? JSONParser.parse(text), case .int(1)? = value["v"], let command = value["command"]?.string else {
            return nil
        }
        self.command = command
        switch value["at"] {
        case .double(let d)?: at = d
        case .int(let n)?: at = Double(n)
        default: at = 0
        }
        fingerprint = value["fingerprint"]?.string ?? ""
        if case .bool(let b)? = value["forced"] { forced = b }
        func variables(_ key: String) -> [Variable] {
            guard case .array(let items)? = value[key] else { return [] }
            return items.compactMap { item in
                guard let s = item.stringArray, s.count == 3 || s.count == 4 else { return nil }
                return Variable(kind: s[0], name: s[1], digest: s[2], value: s.count == 4 ? s[3] : nil)
            }
        }
        environment = variables("env")
        vars = variables("vars")
        needs = []
        if case .array(let items)? = value["needs"] {
            for item in items {
                guard case .array(let fields) = item, fields.count == 4, let name = fields[0].string, let result = fields[1].string,
                      let values = fields[2].string, case .array(let outputs) = fields[3] else { continue }
                let pairs = outputs.compactMap { output -> Variable? in
                    guard let s = output.stringArray, s.count == 2 else { return nil }
                    return Variable(kind: "output", name: s[0], digest: s[1])
                }
                needs.append(Need(name: name, result: result, outputs: pairs, values: values))
            }
        }
        files = []
        if case .array(let items)? = value["files"] {
            for item in items {
                guard case .array(let fields) = item, fields.count == 3, let path = fields[0].string, case .int(let size) = fields[1],
                      let hash = fields[2].string else { continue }
                files.append(File(path: path, size: Int64(size), hash: hash))
            }
        }
        patterns = value["patterns"]?.stringArray ?? []
    }

    public init(command: String, environment: [Variable], vars: [Variable], needs: [Need], files: [File], patterns: [String]) {
        self.command = command
        self.environment = environment
        self.vars = vars
        self.needs = needs
        self.files = files
        self.patterns = patterns
    }
}

extension IncrementalState {
    /// The parts of graph node `index`'s fingerprint as `check` took it
    /// (with the needs it was checked with), for `moon why`; environment
    /// values that do not look secret are filled in, from the graph as
    /// loaded now. Nil when the node was not checked.
    public func currentParts(node index: Int) -> FingerprintParts? {
        return lock.withLock { _ in
            guard let taken = takenLocked(index) else { return nil }
            return partsLocked(index, needs: checkedNeeds[index] ?? [], manifest: taken.fingerprint.manifest, withValues: true)
        }
    }

    /// The parts graph node `index` succeeded with, as `recordSuccess`
    /// noted them for the store (nil before its success, or without a store).
    public func recordedParts(node index: Int) -> String? {
        return lock.withLock { _ in succeededParts[index] }
    }

    /// The parts of graph node `index`'s fingerprint with these needs and
    /// files. `withValues`: add the environment's values whose names do
    /// not look secret (never for parts that are stored). Called with the lock held.
    func partsLocked(_ index: Int, needs: [NeedState], manifest: Manifest, withValues: Bool) -> FingerprintParts {
        let node = nodeLocked(index)
        typealias Variable = FingerprintParts.Variable
        var environment: [Variable] = []
        for (kind, variables) in [("dotenv", graph.dotenvValues), ("env", graph.environment(for: node))] {
            for entry in variables {
                let shown = withValues && !WhyRedaction.looksSecret(entry.name) ? WhyRedaction.redact(entry.value) : nil
                environment.append(Variable(kind: kind, name: entry.name, digest: FingerprintParts.digest(entry.name, entry.value),
                                            value: shown))
            }
        }
        for (i, part) in graph.cache.key.enumerated() {
            let name = "cache.key[\(i)]"
            environment.append(Variable(kind: "cache-key", name: name, digest: FingerprintParts.digest(name, part),
                                        value: withValues ? WhyRedaction.redact(part) : nil))
        }
        let vars = node.vars ?? graph.vars
        let read = vars.isEmpty ? [] : varsReadLocked(node)
        let varParts = read.map { name -> Variable in
            let value = vars.items(name).map { $0.joined(separator: " ") } ?? vars[name] ?? ""
            let whole = (vars[name] ?? "") + "\u{0}" + (vars.items(name)?.joined(separator: "\u{0}") ?? "")
            return Variable(kind: "var", name: name, digest: FingerprintParts.digest(name, whole),
                            value: WhyRedaction.looksSecret(name) ? nil : WhyRedaction.redact(value))
        }
        let needParts = needs.map { need in
            FingerprintParts.Need(name: need.name, result: need.result,
                                  outputs: need.outputs.map { Variable(kind: "output", name: $0.0, digest: FingerprintParts.digest($0.0, $0.1)) },
                                  values: need.values.isEmpty ? "" : FingerprintParts.digest("values", need.values.joined(separator: "\u{0}")))
        }
        let files = manifest.entries.map { FingerprintParts.File(path: $0.path, size: $0.stat.size, hash: $0.hash.hex(digits: 16)) }
        var patterns = node.sources.map { "sources: " + $0 } + node.generates.map { "generates: " + $0 }
        if let depfile = node.depfile { patterns.append("depfile: " + depfile) }
        return FingerprintParts(command: WhyRedaction.redact(Self.commandText(node)), environment: environment, vars: varParts,
                                needs: needParts, files: files, patterns: patterns)
    }

    /// `text` split at each line feed, as a split by Characters splits it
    /// (a CR LF is one Character, so not split there), but a byte at a time:
    /// a restore takes every node's command text.
    static func lines(of text: String) -> [Substring] {
        var lines: [Substring] = []
        var start = text.utf8.startIndex
        var previous: UInt8 = 0
        for index in text.utf8.indices {
            let byte = text.utf8[index]
            if byte == 0x0A && previous != 0x0D {
                lines.append(text[start..<index])
                start = text.utf8.index(after: index)
            }
            previous = byte
        }
        lines.append(text[start...])
        return lines
    }

    /// What `commandDigest` reads of a node, as lines of text: the script
    /// (or argv, or built-in), the shell, `dir:`, success codes, an
    /// instance's item and matrix, and the command line's parameters.
    static func commandText(_ node: Node) -> String {
        var lines: [String] = []
        switch node.action {
        case .shell(let script):
            lines.append("run (\(node.shell.rawValue)):")
            lines += Self.lines(of: script).map { "  " + $0 }
            if lines.last == "  " { lines.removeLast() }
        case .exec(let argv):
            lines.append("exec:")
            lines += argv.map { "  " + $0 }
        case .group:
            lines.append("group")
        case .builtin(let name, let with):
            lines.append("builtin: " + name)
            lines += with.keys.sorted().map { "  \($0): \(with[$0]!.text)" }
        }
        lines.append("dir: " + fingerprintedDirectory(node.dir))
        if node.successCodes != Node.defaultSuccessCodes {
            lines.append("success codes: " + node.successCodes.map { String($0) }.joined(separator: " "))
        }
        if let instance = node.instance {
            if let item = instance.item { lines.append("item: " + item) }
            for entry in instance.matrix { lines.append("matrix \(entry.name): \(entry.value)") }
        }
        for name in node.arguments.params.keys.sorted() { lines.append("parameter \(name)=\(node.arguments.params[name]!)") }
        for arg in node.arguments.args { lines.append("arg: " + arg) }
        return lines.joined(separator: "\n")
    }
}
