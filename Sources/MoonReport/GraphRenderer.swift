import MoonCommand
import MoonGraph
import MoonJSON

/// Renders a graph (or the part of it a plan selected) as text for people,
/// Graphviz dot, Mermaid, or JSON for tools; and the dry-run listing.
/// Returns strings, each ending in a newline; no I/O.
public enum GraphRenderer {
    public enum Format: String, Sendable, CaseIterable {
        case text, dot, mermaid, json
    }

    /// Renders every node of `graph`.
    public static func render(_ graph: Graph, format: Format) -> String {
        render(plan(graph), format: format)
    }

    /// Renders the nodes `plan` selected and the edges between them.
    public static func render(_ plan: Plan, format: Format) -> String {
        switch format {
        case .text: return text(plan)
        case .dot: return dot(plan)
        case .mermaid: return mermaid(plan)
        case .json: return json(plan)
        }
    }

    // MARK: - text

    /// Levels, each node with its queue and command:
    /// ```
    /// graph demo: 3 nodes in 2 levels
    /// level 0
    ///   fetch    [net]      curl -fsS "$URL"
    /// ```
    public static func text(_ plan: Plan) -> String {
        let graph = plan.graph
        var out = "graph \(graph.name): \(count(shown(plan), "node")) in \(count(plan.levels.count, "level"))\n"
        if let description = graph.description { out += "  \(oneLine(description))\n" }
        let nameWidth = plan.selected.map { graph.nodes[$0].name.count }.max() ?? 0
        let queueWidth = plan.selected.map { graph.queue(of: graph.nodes[$0]).name.count + 2 }.max() ?? 0
        var preview = CommandPreview(graph: graph)
        for (l, level) in plan.levels.enumerated() {
            out += "level \(l)\n"
            for v in level where !graph.nodes[v].isBarrier {
                let node = graph.nodes[v]
                out += "  " + pad(node.name, nameWidth) + "  " + pad("[\(graph.queue(of: node).name)]", queueWidth)
                let lines = summary(of: v, in: graph, preview: &preview).split(separator: "\n", omittingEmptySubsequences: false)
                out += "  " + (lines.first ?? "")
                if let slurm = graph.slurmOptions(for: node) {
                    out += slurm.summary.isEmpty ? "  [slurm]" : "  [slurm \(slurm.summary)]"
                }
                out += "\n"
                // A script's further lines, under its first.
                let indent = String(repeating: " ", count: 2 + nameWidth + 2 + queueWidth + 2)
                for line in lines.dropFirst() { out += indent + line + "\n" }
            }
        }
        return out
    }

    /// What a listing shows of a node: its whole command with the values
    /// known before the run put in (`CommandPreview`), or for a `for-each`
    /// over a need's output, which is known only during the run, when it expands.
    static func summary(of node: Int, in graph: Graph, preview: inout CommandPreview) -> String {
        guard let fanOut = graph.nodes[node].fanOut else { return preview.command(of: graph.nodes[node]) }
        return "expands when \(graph.nodes[fanOut.need].name) completes"
    }

    // MARK: - dot

    /// A Graphviz digraph: every id quoted, edges from a need to the node needing it.
    public static func dot(_ plan: Plan) -> String {
        let graph = plan.graph
        var out = "digraph \(dotQuote(graph.name)) {\n  node [shape=box];\n"
        var preview = CommandPreview(graph: graph)
        for v in plan.selected {
            let node = graph.nodes[v]
            // A barrier: one point every instance of its template leads to (N + M edges, not N × M).
            if node.isBarrier {
                out += "  \(dotQuote(node.name)) [shape=circle, label=\(dotQuote("all of " + node.name))];\n"
                continue
            }
            out += "  \(dotQuote(node.name)) [tooltip=\(dotQuote(summary(of: v, in: graph, preview: &preview)))];\n"
        }
        for (from, to) in edges(plan) {
            out += "  \(dotQuote(graph.nodes[from].name)) -> \(dotQuote(graph.nodes[to].name));\n"
        }
        return out + "}\n"
    }

    static func dotQuote(_ text: String) -> String {
        var out = "\""
        for c in text {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": break
            default: out.append(c)
            }
        }
        return out + "\""
    }

    // MARK: - mermaid

    /// A Mermaid flowchart. Ids are the names with anything but letters, digits
    /// and `_` replaced by `_`, prefixed with `n_` so no id is a Mermaid keyword
    /// (`end`), and numbered when two names sanitise alike; labels keep the names.
    public static func mermaid(_ plan: Plan) -> String {
        let graph = plan.graph
        var ids = [String](repeating: "", count: graph.nodes.count)
        var used: Set<String> = []
        for v in plan.selected {
            let base = "n_" + String(graph.nodes[v].name.unicodeScalars.map {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")) ? Character($0) : "_"
            })
            var id = base
            var k = 2
            while !used.insert(id).inserted { id = "\(base)_\(k)"; k += 1 }
            ids[v] = id
        }
        var out = "flowchart TD\n"
        for v in plan.selected {
            let node = graph.nodes[v]
            out += node.isBarrier ? "  \(ids[v])((\"all of \(mermaidLabel(node.name))\"))\n" : "  \(ids[v])[\"\(mermaidLabel(node.name))\"]\n"
        }
        for (from, to) in edges(plan) {
            out += "  \(ids[from]) --> \(ids[to])\n"
        }
        return out
    }

    static func mermaidLabel(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\"": out += "#quot;"
            case "<": out += "#lt;"
            case ">": out += "#gt;"
            default: out.append(c)
            }
        }
        return out
    }

    // MARK: - json

    /// `{"name", "description", "queues", "nodes", "edges", "levels"}`, keys in a fixed order.
    public static func json(_ plan: Plan) -> String {
        let graph = plan.graph
        let queues: [JSONValue] = graph.queues.map { queue in
            var members: [(String, JSONValue)] = [("name", .string(queue.name))]
            switch queue.concurrency {
            case .auto: members.append(("concurrency", .string("auto")))
            case .fixed(let n): members.append(("concurrency", .int(n)))
            }
            members.append(("executor", .string(queue.executor.name)))
            if let slurm = queue.slurm { members.append(("slurm", slurmJSON(slurm))) }
            return .object(members)
        }
        var preview = CommandPreview(graph: graph)
        let nodes: [JSONValue] = plan.selected.map { v in nodeJSON(graph, v, plan, preview: &preview) }
        let edges: [JSONValue] = edges(plan).map { .strings([graph.nodes[$0.0].name, graph.nodes[$0.1].name]) }
        let levels: [JSONValue] = plan.levels.map { .strings($0.map { graph.nodes[$0].name }) }
        let root: JSONValue = .object([
            ("name", .string(graph.name)),
            ("description", graph.description.map(JSONValue.string) ?? .null),
            ("queues", .array(queues)),
            ("nodes", .array(nodes)),
            ("edges", .array(edges)),
            ("levels", .array(levels)),
        ])
        return root.pretty() + "\n"
    }

    private static func nodeJSON(_ graph: Graph, _ v: Int, _ plan: Plan, preview: inout CommandPreview) -> JSONValue {
        let node = graph.nodes[v]
        var members: [(String, JSONValue)] = [
            ("name", .string(node.name)),
            ("description", node.description.map(JSONValue.string) ?? .null),
            ("needs", .strings(node.needs.map { graph.nodes[$0].name })),
            ("queue", .string(graph.queue(of: node).name)),
            ("kind", .string(node.action.kind)),
        ]
        // The point a fan-out's need on a whole fan-out goes through (named as the template).
        if node.isBarrier { members.append(("barrier", .bool(true))) }
        switch node.action {
        case .shell(let script): members.append(("command", .string(script)))
        case .exec(let argv): members.append(("command", .strings(argv)))
        case .builtin(let name, let with):
            members.append(("command", .string(name)))
            members.append(("with", .object(with.keys.sorted().map { ($0, argumentJSON(with[$0]!)) })))
        case .group: break
        }
        // The command as written above; here as it would run, the instance's values put in.
        if case .group = node.action {} else if node.fanOut == nil {
            members.append(("preview", .string(preview.command(of: node))))
        }
        if case .shell = node.action { members.append(("shell", .string(node.shell.rawValue))) }
        if let fanOut = node.fanOut {
            members.append(("for_each", .object([("need", .string(graph.nodes[fanOut.need].name)), ("output", .string(fanOut.key))])))
        }
        // What the command's expressions read besides the graph: the instance's values, the command line's.
        if let instance = node.instance {
            var values: [(String, JSONValue)] = [("template", .string(instance.template))]
            if let item = instance.item { values.append(("item", .string(item))) }
            if !instance.matrix.isEmpty { values.append(("matrix", .object(instance.matrix.map { ($0.name, .string($0.value)) }))) }
            members.append(("instance", .object(values)))
        }
        if !node.arguments.isEmpty {
            members.append(("params", .object(node.arguments.params.keys.sorted().map { ($0, .string(node.arguments.params[$0]!)) })))
            members.append(("args", .strings(node.arguments.args)))
        }
        members += [
            ("if", .string(node.condition.rawValue)),
            ("continue_on_error", .bool(node.continueOnError)),
            ("timeout_ms", node.timeout.map { .int($0.milliseconds) } ?? .null),
            ("retry", .object([
                ("times", .int(node.retry.times)),
                ("delay_ms", .int(node.retry.delay.milliseconds)),
                ("backoff", .double(node.retry.backoff)),
                ("max_delay_ms", node.retry.maxDelay.map { .int($0.milliseconds) } ?? .null),
            ])),
            ("dir", node.dir.map(JSONValue.string) ?? .null),
            ("env", .object(node.env.entries.map { ($0.name, .string($0.value)) })),
        ]
        if let slurm = graph.slurmOptions(for: node) { members.append(("slurm", slurmJSON(slurm))) }
        members += [("level", .int(plan.level[v])), ("priority", .int(plan.priority[v]))]
        return .object(members)
    }

    private static func argumentJSON(_ argument: BuiltinArgument) -> JSONValue {
        switch argument {
        case .integer(let n): return .int(n)
        case .duration(let d): return .string(DurationText.format(d))
        default: return .string(argument.text)
        }
    }

    private static func slurmJSON(_ slurm: SlurmOptions) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let v = slurm.partition { members.append(("partition", .string(v))) }
        if let v = slurm.cpusPerTask { members.append(("cpus-per-task", .int(v))) }
        if let v = slurm.mem { members.append(("mem", .string(v))) }
        if let v = slurm.time { members.append(("time", .string(v))) }
        if let v = slurm.account { members.append(("account", .string(v))) }
        if !slurm.args.isEmpty { members.append(("args", .strings(slurm.args))) }
        return .object(members)
    }

    // MARK: - dry run

    /// What `moon run -n` prints: the nodes in start order, each with its
    /// level, queue (and Slurm resources on a Slurm queue) and command.
    /// ```
    /// dry run: graph demo, 3 nodes in 2 levels
    ///   1. fetch    level 0  net      curl -fsS "$URL"
    /// ```
    public static func dryRun(_ graph: Graph, plan: Plan) -> String { dryRun(plan) }

    /// The dry-run listing of `plan` (whose `graph` is the graph listed).
    /// `states`: what a run would do to each node (`will run`, `may run`, `up
    /// to date`, by graph node index), shown in a column and counted in the
    /// heading; nil leaves them out. The columns are measured and filled in
    /// one pass over the plan, which one function keeps together.
    public static func dryRun(_ plan: Plan, states: [Int: String]? = nil) -> String {
        let graph = plan.graph
        let total = graph.nodes.count(where: { !$0.isBarrier })
        var out = "dry run: graph \(graph.name), \(count(shown(plan), "node")) in \(count(plan.levels.count, "level"))"
        if shown(plan) != total { out += " (of \(total))" }
        let listed = plan.startOrder.filter { !graph.nodes[$0].isBarrier }
        if let states {
            var counts: [(String, Int)] = []
            for v in listed {
                let state = states[v] ?? ""
                if let i = counts.firstIndex(where: { $0.0 == state }) { counts[i].1 += 1 } else { counts.append((state, 1)) }
            }
            let order = ["will run", "from cache", "may run", "up to date"]
            let rank = { (state: String) in order.firstIndex(of: state) ?? order.count }
            out += ": " + counts.sorted { rank($0.0) < rank($1.0) }.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
        }
        out += "\n"
        let stateWidth = states.map { s in listed.map { s[$0]?.count ?? 0 }.max() ?? 0 } ?? 0
        let numberWidth = String(listed.count).count
        let nameWidth = plan.selected.map { graph.nodes[$0].name.count }.max() ?? 0
        let levelWidth = String(max(0, plan.levels.count - 1)).count
        let queueWidth = plan.selected.map { graph.queues[graph.nodes[$0].queue].name.count }.max() ?? 0
        // The lines are built as UTF-8 bytes and made a string once: a plan
        // of many nodes would otherwise grow one string piece by piece.
        var bytes = Array(out.utf8)
        bytes.reserveCapacity(plan.startOrder.count * (nameWidth + queueWidth + stateWidth + 40))
        var preview = CommandPreview(graph: graph)
        func put(_ text: String, width: Int = 0, right: Bool = false) {
            let fill = width > 0 ? max(0, width - text.count) : 0
            if right { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: fill)) }
            bytes.append(contentsOf: text.utf8)
            if !right { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: fill)) }
        }
        for (i, v) in listed.enumerated() {
            put("  ")
            put(String(i + 1), width: numberWidth, right: true)
            put(". ")
            put(graph.nodes[v].name, width: nameWidth)
            put("  level ")
            put(String(plan.level[v]), width: levelWidth)
            put("  ")
            let queue = graph.queues[graph.nodes[v].queue]
            put(queue.name, width: queueWidth)
            if let states {
                put("  ")
                put(states[v] ?? "", width: stateWidth)
            }
            put("  ")
            let command = summary(of: v, in: graph, preview: &preview)
            let newline = command.firstIndex(of: "\n")
            put(newline.map { String(command[..<$0]) } ?? command)
            if queue.slurm != nil, let slurm = graph.slurmOptions(for: graph.nodes[v]) {
                let summary = slurm.summary
                put(summary.isEmpty ? "  [slurm]" : "  [slurm \(summary)]")
            }
            put("\n")
            // A script's further lines, under its first.
            if let newline {
                let indent = 2 + numberWidth + 2 + nameWidth + 8 + levelWidth + 2 + queueWidth + (states == nil ? 0 : 2 + stateWidth) + 2
                for line in command[command.index(after: newline)...].split(separator: "\n", omittingEmptySubsequences: false) {
                    put(String(repeating: " ", count: indent))
                    put(String(line))
                    put("\n")
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Helpers

    /// How many nodes a listing shows: the selected ones but barriers.
    static func shown(_ plan: Plan) -> Int {
        plan.selected.count(where: { !plan.graph.nodes[$0].isBarrier })
    }

    static func plan(_ graph: Graph) -> Plan {
        // A validated graph is acyclic, so planning all of it cannot fail.
        (try? Plan.make(graph: graph)) ?? Plan.empty(graph)
    }

    /// (need, dependent) pairs among the selected nodes: by dependent in file order, then needs as written.
    static func edges(_ plan: Plan) -> [(Int, Int)] {
        var result: [(Int, Int)] = []
        for v in plan.selected {
            for need in plan.graph.nodes[v].needs where plan.isSelected(need) { result.append((need, v)) }
        }
        return result
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
}

