import MoonDocument

/// Decodes `queues:` (with their Slurm options) and `defaults:`, which the
/// nodes are decoded against.
enum QueueDecoder {
    static func queues(_ node: YAMLNode, _ values: inout ValueDecoding) -> [QueueSpec] {
        var queues = [QueueSpec(name: QueueSpec.defaultName)]
        if node.isNull { return queues }
        guard let pairs = values.mapping(node, expecting: "a mapping of queue names to queues") else { return queues }
        var seen: Set<String> = []
        for pair in pairs {
            guard let name = values.keyName(pair.key) else { continue }
            guard Node.isValidName(name) else {
                values.error("invalid queue name '\(name)'; \(Node.nameRule)", at: pair.key.span)
                continue
            }
            guard seen.insert(name).inserted else {
                values.error("queue '\(name)' is defined twice; remove one", at: pair.key.span)
                continue
            }
            var queue = QueueSpec(name: name, span: pair.key.span)
            if !pair.value.isNull, let body = values.mapping(pair.value, expecting: "a mapping with concurrency, executor or slurm") {
                let keys = values.checkKeys(body, allowed: GraphKeys.queue, context: "in queue '\(name)'")
                if let c = keys["concurrency"], !c.value.isNull {
                    if case .scalar(let text, _, _) = c.value.kind, text == "auto" {
                        queue.concurrency = .auto
                    } else if let n = values.integer(c.value), n > 0 {
                        queue.concurrency = .fixed(n)
                    } else {
                        values.error("invalid concurrency \(values.describe(c.value)) for queue '\(name)'; write a positive integer or 'auto'", at: c.value.span)
                    }
                }
                var slurm: SlurmOptions?
                if let s = keys["slurm"], !s.value.isNull {
                    slurm = Self.slurm(s.value, &values)
                }
                if let e = keys["executor"], !e.value.isNull {
                    switch values.word(e.value, choices: ["local", "slurm"], what: "executor") {
                    case "slurm": queue.executor = .slurm(slurm ?? SlurmOptions())
                    case "local":
                        if slurm != nil, let s = keys["slurm"] {
                            values.error("queue '\(name)' has 'slurm' options but runs locally; set 'executor: slurm' or remove them", at: s.key.span)
                        }
                    default: break
                    }
                } else if slurm != nil, let s = keys["slurm"] {
                    values.error("queue '\(name)' has 'slurm' options but no 'executor: slurm'; add it", at: s.key.span)
                }
            }
            if name == QueueSpec.defaultName { queues[0] = queue } else { queues.append(queue) }
        }
        return queues
    }

    static func slurm(_ node: YAMLNode, _ values: inout ValueDecoding) -> SlurmOptions? {
        guard let pairs = values.mapping(node, expecting: "a mapping of Slurm options (partition, cpus-per-task, mem, time, account, args)") else {
            return nil
        }
        let keys = values.checkKeys(pairs, allowed: GraphKeys.slurm, context: "in slurm options")
        var options = SlurmOptions()
        options.partition = keys["partition"].flatMap { values.string($0.value, expecting: "a partition name") }
        options.account = keys["account"].flatMap { values.string($0.value, expecting: "an account name") }
        if let c = keys["cpus-per-task"], !c.value.isNull {
            if let n = values.integer(c.value), n > 0 {
                options.cpusPerTask = n
            } else {
                values.error("invalid cpus-per-task \(values.describe(c.value)); write a positive integer", at: c.value.span)
            }
        }
        if let m = keys["mem"], let text = values.string(m.value, expecting: "an amount of memory like 4G") {
            if SlurmOptions.isValidMemory(text) { options.mem = text } else {
                values.error("invalid mem '\(text)'; write an amount like 4G, 512M or 1000 (megabytes)", at: m.value.span)
            }
        }
        if let t = keys["time"], let text = values.string(t.value, expecting: "a Slurm time limit like 1:00:00") {
            if SlurmOptions.isValidTime(text) {
                options.time = text
            } else if let duration = try? DurationParser.parse(text) {
                // moon's own durations (30m, 1h30m) work too, as the issue's
                // example writes them; Slurm gets them as D-HH:MM:SS.
                options.time = SlurmOptions.time(duration)
            } else {
                values.error("invalid time '\(text)'; write a duration (30m, 1h30m), minutes (30), hours:minutes:seconds (1:00:00) or days-hours:minutes:seconds (1-00:00:00)", at: t.value.span)
            }
        }
        if let a = keys["args"], !a.value.isNull {
            options.args = values.strings(a.value, expecting: "a list of srun arguments", item: "an argument") ?? []
        }
        return options
    }

    static func defaults(_ node: YAMLNode, queues: [QueueSpec], _ values: inout ValueDecoding) -> NodeDefaults {
        var defaults = NodeDefaults()
        if node.isNull { return defaults }
        guard let pairs = values.mapping(node, expecting: "a mapping of node defaults (queue, timeout, retry, shell, …)") else {
            return defaults
        }
        let keys = values.checkKeys(pairs, allowed: GraphKeys.defaults, context: "in defaults")
        if let q = keys["queue"], let index = queueIndex(q.value, queues: queues, owner: "defaults", &values) { defaults.queue = index }
        if let t = keys["timeout"] { defaults.timeout = values.timeout(t.value) }
        if let r = keys["retry"], let policy = values.retry(r.value) { defaults.retry = policy }
        if let s = keys["shell"], let shell = values.shell(s.value) { defaults.shell = shell }
        if let d = keys["dir"] { defaults.dir = values.string(d.value, expecting: "a directory") }
        if let c = keys["continue-on-error"], let b = values.bool(c.value, key: "continue-on-error") { defaults.continueOnError = b }
        if let i = keys["if"], let condition = values.condition(i.value) { defaults.condition = condition }
        if let c = keys["success-codes"], let codes = values.successCodes(c.value) { defaults.successCodes = codes }
        if let r = keys["resources"], let spec = ResourceSpec.decode(r.value, &values) { defaults.resources = spec }
        return defaults
    }

    /// The index of the queue a `queue:` names; an error (with a suggestion) for an unknown one.
    static func queueIndex(_ node: YAMLNode, queues: [QueueSpec], owner: @autoclosure () -> String,
                           _ values: inout ValueDecoding) -> Int? {
        if node.isNull { return nil }
        guard let name = values.string(node, expecting: "a queue name") else { return nil }
        if let index = queues.firstIndex(where: { $0.name == name }) { return index }
        let names = queues.map(\.name)
        values.error("\(owner()) uses unknown queue '\(name)'\(values.suggestion(for: name, in: names))", at: node.span,
                     notes: ["queues: " + names.joined(separator: ", ") + "; declare new ones under 'queues:'"])
        return nil
    }
}
