import MoonEvents
import MoonGraph

/// Admission by memory and slots (`resources:`, `--memory`): which ready
/// node starts when the best one does not fit. Only a run whose nodes
/// declare (or learned) resources has a `budget`; any other starts nodes by
/// queue width and `-j` alone, as before.
extension Runner {
    /// What `node` holds while it runs.
    func need(_ node: Int) -> ResourceNeed {
        let spec = plan.nodes[node]
        return ResourceNeed(memory: spec.memory ?? 0, slots: spec.slots, queue: spec.queue)
    }

    /// Whether the OOM killer killed in the node: its own memory cgroup's
    /// count when it had one (another process's OOM kill is not the
    /// node's), else whether the system's count grew while it ran.
    func oomKillerRan(_ node: Int, _ error: NodeError) -> Bool {
        if let kills = error.memoryKills { return kills > 0 }
        guard let before = oomKillsAtStart[node], let now = options.resources.oomKills() else { return false }
        return now > before
    }

    /// `best` when it fits beside what runs; otherwise the best ready node
    /// that fits beside what runs and what is kept for `best`
    /// (`ResourceBudget.fitsBeside`), or nil: none starts now. Takes what
    /// the chosen node needs.
    func admit(_ best: Int) -> Int? {
        guard var budget else { return best }
        defer { self.budget = budget }
        if budget.fits(need(best)) {
            budget.clearReserve()
            waitingForResources = nil
            take(best, &budget)
            return best
        }
        waitingForResources = best
        // Behind the waiting node: the other ready nodes, by priority then file order.
        var candidates: [Int] = []
        for q in ready.indices where inFlight[q] < plan.queues[q].concurrency { candidates += ready[q].nodes }
        candidates.sort { a, b in
            let (pa, pb) = (plan.nodes[a].priority, plan.nodes[b].priority)
            return pa != pb ? pa > pb : a < b
        }
        guard let node = candidates.first(where: { $0 != best && budget.fitsBeside(need($0)) }) else { return nil }
        take(node, &budget)
        return node
    }

    private func take(_ node: Int, _ budget: inout ResourceBudget) {
        let need = need(node)
        if budget.exceedsMemory(need), warnedLarge.insert(node).inserted {
            options.resources.warn("node '\(plan.nodes[node].name)' needs \(ByteSize.text(need.memory)) of memory, more than the run's budget of "
                + "\(ByteSize.text(budget.memory)); it runs alone (raise --memory, or lower its resources)")
        }
        budget.take(need)
        if need.memory > 0 { oomKillsAtStart[node] = options.resources.oomKills() }
    }

    /// A node that needs memory and was killed by SIGKILL (not from moon)
    /// while the kernel's OOM killer ran says so; any other error is as it was.
    func outOfMemory(_ node: Int, _ error: NodeError) -> NodeError {
        guard error.kind == .signal, error.signal == 9, oomKillerRan(node, error), let memory = plan.nodes[node].memory else { return error }
        var changed = error
        changed.message = "killed by SIGKILL: out of memory (the kernel's OOM killer ran while it ran; it was admitted with "
            + "\(ByteSize.text(memory)); declare more in resources: {memory})"
        return changed
    }

    /// A node ended (or a service started): what it held goes back, first to the node waiting for it.
    func giveBack(_ node: Int) {
        budget?.give(need(node), waiting: waitingForResources.map(need))
    }

    /// The budget, once the run starts: `--memory`, or the memory available
    /// now, read only when some node needs memory.
    func makeBudget() {
        let needsMemory = plan.nodes.contains { $0.memory != nil }
        let memory = needsMemory ? options.resources.memory ?? options.resources.available() : nil
        budget = ResourceBudget(memory: memory ?? .max, jobs: options.jobs ?? .max, queues: plan.queues.map(\.concurrency))
    }

    /// Nodes that declare no memory take what they learned
    /// (`ResourceOptions.learned`), unless they already started: what a
    /// running node holds is what it was admitted with.
    func learnResources(_ learned: [String: Int64]) {
        for index in plan.nodes.indices where plan.nodes[index].memory == nil {
            switch state[index] {
            case .waiting, .ready, .checking, .asking: break
            default: continue
            }
            guard let memory = learned[plan.nodes[index].name] else { continue }
            plan.nodes[index].memory = memory
            usesResources = true
        }
    }

    /// Before the run's first start, reads what the nodes learned
    /// (`ResourceOptions.learn`): a run that starts nothing (a no-op) reads
    /// nothing. A budget made now is made before anything holds a slot.
    func learnBeforeTheFirstStart() {
        guard !learnedRead else { return }
        learnedRead = true
        let learned = options.resources.learn()
        guard !learned.isEmpty else { return }
        learnResources(learned)
        if usesResources, budget == nil { makeBudget() }
    }
}
