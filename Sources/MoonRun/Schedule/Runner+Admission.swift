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
        // A retry after an OOM kill waits for the whole budget, or holds it: nothing starts beside it.
        guard memoryRetries.isIdle else { return nil }
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

    /// Whether the kernel killed the node's attempt for memory: a node that
    /// needs memory, SIGKILLed (not by moon) while the kernel's OOM killer
    /// ran. The one place that decides it: what is told and what retries
    /// alone follow from it.
    func killedForMemory(_ node: Int, _ error: NodeError) -> Bool {
        guard budget != nil, error.kind == .signal, error.signal == 9 else { return false }
        return oomKillerRan(node, error)
    }

    /// What a node killed for memory fails (or retries) with: what it had,
    /// and, when it retries, that the retry runs alone with the whole budget.
    func outOfMemoryMessage(_ node: Int, retrying: Bool) -> String {
        let had = memoryRetries.holds(node)
            ? "it ran alone with the whole budget\(budgetText)"
            : "it was admitted with \(ByteSize.text(need(node).memory))"
        let next = !retrying ? "" : memoryRetries.holds(node) ? "; it retries alone again" : "; it retries alone with the whole budget\(budgetText)"
        return "killed by SIGKILL: out of memory (the kernel's OOM killer ran while it ran; \(had)\(next); "
            + "declare more in resources: {memory})"
    }

    /// An attempt's error, told as out of memory when it was (`killedForMemory`).
    func outOfMemory(_ node: Int, _ error: NodeError) -> NodeError {
        guard killedForMemory(node, error) else { return error }
        var changed = error
        changed.message = outOfMemoryMessage(node, retrying: false)
        return changed
    }

    /// ` of 8 GiB`; nothing when the budget has no limit (the memory available was unknown).
    private var budgetText: String {
        guard let memory = budget?.memory, memory != .max else { return "" }
        return " of " + ByteSize.text(memory)
    }

    /// The node was killed for memory and retries: what it holds of the
    /// budget goes back, and it waits for the whole of it; from now on no
    /// other node starts until it has had it and ended.
    func waitForWholeBudget(_ node: Int) {
        guard !memoryRetries.holds(node), !memoryRetries.waits(node) else { return }
        let held = ResourceNeed(memory: need(node).memory, slots: 0, queue: plan.nodes[node].queue)
        budget?.give(held)
        memoryRetries.waiting.append(node)
        grantWholeBudget()
    }

    /// Gives the whole budget to the first waiting node once nothing else
    /// runs (nodes that wait for it hold no memory).
    func grantWholeBudget() {
        guard memoryRetries.holder == nil, let node = memoryRetries.waiting.first, var budget,
              totalInFlight == memoryRetries.waiting.count else { return }
        memoryRetries.waiting.removeFirst()
        memoryRetries.holder = node
        budget.take(ResourceNeed(memory: budget.memory, slots: 0, queue: plan.nodes[node].queue))
        self.budget = budget
        let grant = memoryRetries.grants.removeValue(forKey: node)
        grant?()
    }

    /// Calls `start` when the node's next attempt may start: at once,
    /// unless it waits for the whole budget (`waitForWholeBudget`), then
    /// when it has it.
    func whenAdmitted(_ node: Int, start: @escaping () -> Void) {
        guard memoryRetries.waits(node) else { return start() }
        memoryRetries.grants[node] = start
    }

    /// The node leaves this run (handed over in watch mode): it no longer
    /// waits for this run's budget, nor holds it.
    func forgetMemoryRetry(_ node: Int) {
        guard !memoryRetries.isIdle else { return }
        let grant = memoryRetries.grants[node]
        memoryRetries.remove(node)
        grantWholeBudget()
        grant?()
    }

    /// A node ended (or a service started): what it held goes back, first to the node waiting for it.
    func giveBack(_ node: Int) {
        let held = held(node)
        budget?.give(held, waiting: waitingForResources.map(need))
    }

    /// What the node holds now: what it was admitted with, or, retrying
    /// after an OOM kill, nothing of the memory while it waits and all of
    /// it once granted.
    private func held(_ node: Int) -> ResourceNeed {
        var held = need(node)
        if memoryRetries.holds(node) {
            held.memory = budget?.memory ?? held.memory
        } else if memoryRetries.waits(node) {
            held.memory = 0
        }
        return held
    }

    /// The budget, once the run starts: `--memory`, or the memory available
    /// now, read only when some node needs memory.
    /// `memory`: the budget's memory when already read.
    func makeBudget(memory known: Int64? = nil) {
        let needsMemory = plan.nodes.contains { $0.memory != nil }
        let memory = needsMemory ? known ?? options.resources.memory ?? options.resources.available() : nil
        budget = ResourceBudget(memory: memory ?? .max, jobs: options.jobs ?? .max, queues: plan.queues.map(\.concurrency))
    }

    /// Nodes that declare no memory take what they learned
    /// (`ResourceOptions.learned`), unless they already started: what a
    /// running node holds is what it was admitted with.
    func learnResources(_ learned: [String: Int64]) {
        for index in plan.nodes.indices where plan.nodes[index].memory == nil && !plan.nodes[index].onSlurm {
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
    /// A run that cannot start two nodes at once (one node to run, `-j 1`)
    /// reads nothing: memory cannot decide what starts when it starts alone.
    /// Nor does it when the largest `-j` of what may run fit in the budget
    /// together: then what was learned is left aside, and no budget is kept
    /// (a graph that declares nothing starts its nodes as if it had learned nothing).
    func learnBeforeTheFirstStart() {
        guard !learnedRead else { return }
        learnedRead = true
        let mayRun = plan.nodes.indices.filter { index in
            guard !plan.nodes[index].isBarrier else { return false }
            switch state[index] {
            case .waiting, .ready, .checking, .asking: return true
            default: return false
            }
        }
        let fansOut = mayRun.contains { plan.nodes[$0].fanOut != nil }
        guard mayRun.count > 1 || fansOut else { return }
        // What would be left aside below is known from one number per run:
        // the history's nodes are read only when they could matter.
        if !usesResources, !fansOut, let bound = options.resources.learnedBound() {
            guard bound > 0 else { return }
            let (total, overflow) = bound.multipliedReportingOverflow(by: Int64(min(options.jobs ?? mayRun.count, mayRun.count)))
            if !overflow, let memory = options.resources.memory ?? options.resources.available(), total <= memory { return }
        }
        let learned = options.resources.learn()
        guard !learned.isEmpty else { return }
        var memory: Int64?
        if !usesResources, !fansOut {
            let largest = mayRun.map { learned[plan.nodes[$0].name] ?? 0 }.sorted(by: >).prefix(options.jobs ?? mayRun.count)
            let total = largest.reduce(Int64(0), &+)
            memory = options.resources.memory ?? options.resources.available()
            if let memory, total <= memory { return }
        }
        learnResources(learned)
        if usesResources, budget == nil { makeBudget(memory: memory) }
    }
}
