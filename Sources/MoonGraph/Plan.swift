import MoonDocument

/// What a run will do: the selected nodes (the targets and everything they
/// need, transitively), their topological levels, and the order in which
/// they would start. Computed in linear time (plus sorting within levels), without recursion.
public struct Plan: Sendable {
    public let graph: Graph
    /// Selected node indices, in file order.
    public let selected: [Int]
    /// Selected nodes by level: level 0 needs nothing, level k needs something at level k-1.
    /// Each level is in file order.
    public let levels: [[Int]]
    /// Per node index: its level, or -1 when not selected.
    public let level: [Int]
    /// Per node index: the weight of the heaviest path from the node to the end
    /// of the selected graph, the node included (1 per node unless weighted,
    /// so by default the number of nodes on the longest remaining path);
    /// 0 when not selected. Among ready nodes, the highest starts first.
    public let priority: [Int]
    /// The order a run with unlimited jobs starts the nodes: level by level,
    /// higher `schedulingPriority` first, ties in file order.
    public private(set) var startOrder: [Int]
    /// Per node index: its `priority:` rank, raised to the highest positive
    /// rank of its selected dependents (a node that must start early starts
    /// its needs early too); nil when no selected node sets `priority:`.
    public let rank: [Int]?

    /// What `priority:` may be: a few ranks above and below the default 0.
    public static let priorities = -10...10

    /// What the runner orders ready nodes by: the `priority:` rank first,
    /// then `priority` (the critical path). Without ranks it is `priority`
    /// itself; with them, the path is kept to 26 bits (18 hours of
    /// recorded milliseconds; longer paths tie) so that both fit the 31
    /// bits the ready queue orders by.
    public func schedulingPriority(_ node: Int) -> Int {
        guard let rank else { return priority[node] }
        let offset = rank[node] - Self.priorities.lowerBound + 1
        return offset << 26 | min(max(priority[node], 0), (1 << 26) - 1)
    }

    /// Plans `targets` (all nodes when empty). `weights`, indexed like
    /// `graph.nodes`, replace the default weight of 1 (e.g. recorded durations
    /// in milliseconds); missing or negative entries count as 1.
    /// Throws one diagnostic (no span) per unknown target, with a suggestion.
    public static func make(graph: Graph, targets: [String] = [], weights: [Int]? = nil) throws(Diagnostics) -> Plan {
        let n = graph.nodes.count
        let selected = try selection(of: graph, targets: targets)
        let (order, dependents) = try topologicalOrder(of: graph, selected: selected)

        var level = [Int](repeating: -1, count: n)
        var levelCount = 0
        for v in order {
            var l = 0
            // A barrier stands at the level of its dependents: it adds no step.
            for need in graph.nodes[v].needs { l = max(l, level[need] + (graph.nodes[need].isBarrier ? 0 : 1)) }
            level[v] = l
            levelCount = max(levelCount, l + 1)
        }
        var priority = [Int](repeating: 0, count: n)
        for v in order.reversed() {
            var rest = 0
            for d in dependents[v] { rest = max(rest, priority[d]) }
            var weight = 1
            if let weights, v < weights.count, weights[v] >= 0 { weight = weights[v] }
            if graph.nodes[v].isBarrier { weight = 0 }
            // Saturating, so absurd weights cannot trap.
            let (sum, overflow) = weight.addingReportingOverflow(rest)
            priority[v] = overflow ? Int.max : sum
        }
        var levels = [[Int]](repeating: [], count: levelCount)
        for v in selected { levels[level[v]].append(v) }
        let rank = ranks(of: graph, order: order, dependents: dependents)
        var plan = Plan(graph: graph, selected: selected, levels: levels, level: level, priority: priority, startOrder: [], rank: rank)
        var startOrder: [Int] = []
        startOrder.reserveCapacity(selected.count)
        // A barrier shares its dependents' level and the highest priority
        // among them: on a tie it goes first, so the order stays topological.
        let isBarrier = { (v: Int) in graph.nodes[v].isBarrier }
        for nodes in levels {
            if rank == nil {
                startOrder += nodes.sorted {
                    if priority[$0] != priority[$1] { return priority[$0] > priority[$1] }
                    if isBarrier($0) != isBarrier($1) { return isBarrier($0) }
                    return $0 < $1
                }
            } else {
                let key = nodes.map(plan.schedulingPriority)
                startOrder += nodes.indices.sorted {
                    if key[$0] != key[$1] { return key[$0] > key[$1] }
                    if isBarrier(nodes[$0]) != isBarrier(nodes[$1]) { return isBarrier(nodes[$0]) }
                    return nodes[$0] < nodes[$1]
                }.map { nodes[$0] }
            }
        }
        plan.startOrder = startOrder
        return plan
    }

    /// Each selected node's rank: its own `priority:`, raised to the highest
    /// positive rank of its dependents; nil when every selected node has priority 0 (the
    /// usual case, which then costs one scan).
    private static func ranks(of graph: Graph, order: [Int], dependents: [[Int]]) -> [Int]? {
        guard order.contains(where: { graph.nodes[$0].priority != 0 }) else { return nil }
        var rank = [Int](repeating: 0, count: graph.nodes.count)
        for v in order.reversed() {
            // Only a raised rank reaches the needs: a low one must not hold back what others wait for.
            var r = graph.nodes[v].priority
            for d in dependents[v] where rank[d] > 0 { r = max(r, rank[d]) }
            rank[v] = r
        }
        return rank
    }

    /// The targets and everything they need, transitively (every node when
    /// there are no targets), in file order. A target is a node, a template
    /// (all its instances) or a pattern (`test[*]`, `lib:*`); an internal
    /// node is not a target. (`moon run` passes `Graph.defaultTargets`
    /// when it is given none.)
    private static func selection(of graph: Graph, targets: [String]) throws(Diagnostics) -> [Int] {
        let n = graph.nodes.count
        var isSelected = [Bool](repeating: targets.isEmpty, count: n)
        if !targets.isEmpty {
            var problems: [Diagnostic] = []
            var stack: [Int] = []
            for target in targets {
                guard let indices = try? graph.targets(for: target) else {
                    problems.append(graph.unknownTarget(target))
                    continue
                }
                for index in indices where !isSelected[index] { isSelected[index] = true; stack.append(index) }
            }
            guard problems.isEmpty else { throw Diagnostics(problems) }
            while let v = stack.popLast() {
                for need in graph.nodes[v].needs where !isSelected[need] {
                    isSelected[need] = true
                    stack.append(need)
                }
            }
        }
        return (0..<n).filter { isSelected[$0] }
    }

    /// The selected nodes in an order where each comes after its needs
    /// (Kahn's algorithm, seeded in file order), and each node's selected dependents.
    private static func topologicalOrder(of graph: Graph, selected: [Int]) throws(Diagnostics) -> (order: [Int], dependents: [[Int]]) {
        let n = graph.nodes.count
        var pending = [Int](repeating: 0, count: n)
        var dependents = [[Int]](repeating: [], count: n)
        for v in selected {
            pending[v] = graph.nodes[v].needs.count
            for need in graph.nodes[v].needs { dependents[need].append(v) }
        }
        var order: [Int] = []
        order.reserveCapacity(selected.count)
        for v in selected where pending[v] == 0 { order.append(v) }
        var head = 0
        while head < order.count {
            let v = order[head]; head += 1
            for d in dependents[v] {
                pending[d] -= 1
                if pending[d] == 0 { order.append(d) }
            }
        }
        guard order.count == selected.count else {
            let stuck = selected.filter { pending[$0] > 0 }.map { graph.nodes[$0].name }
            throw Diagnostics([.error("dependency cycle among: " + stuck.joined(separator: ", "), at: nil)])
        }
        return (order, dependents)
    }

    public func isSelected(_ node: Int) -> Bool { level[node] >= 0 }

    /// The heaviest path through the selection, from a node with no needs to
    /// the end: the first node of highest priority, then at each step the
    /// dependent carrying the rest of that priority (ties in file order).
    public var criticalPath: [Int] {
        guard let first = levels.first?.max(by: { priority[$0] != priority[$1] ? priority[$0] < priority[$1] : $0 > $1 }) else {
            return []
        }
        var dependents = [[Int]](repeating: [], count: graph.nodes.count)
        for v in selected { for need in graph.nodes[v].needs { dependents[need].append(v) } }
        var path = [first]
        var v = first
        while let next = dependents[v].max(by: { priority[$0] != priority[$1] ? priority[$0] < priority[$1] : $0 > $1 }) {
            path.append(next)
            v = next
        }
        return path
    }

    /// A plan that selects nothing (only for graphs that could not be planned).
    public static func empty(_ graph: Graph) -> Plan {
        Plan(graph: graph, selected: [], levels: [], level: [Int](repeating: -1, count: graph.nodes.count),
             priority: [Int](repeating: 0, count: graph.nodes.count), startOrder: [], rank: nil)
    }
}
