import MoonEvents
import MoonGraph

/// Dynamic fan-out: a node with `for-each: ${{ needs.NEED.outputs.KEY }}`
/// is expanded when its needs have ended and its `if` lets it run. Each
/// item of the output's JSON list becomes an instance, `NODE[ITEM]`: a copy
/// of the node with its own events, retries, timeout and history, which
/// needs what the node needs (and so can start at once), and is checked
/// for being up to date as any node. The node itself becomes a group of
/// its instances: what needs it waits for all of them.
extension Runner {
    /// Adds nodes made during the run after the plan's: waiting, each with
    /// its needs (all of which must have ended) and no dependents yet.
    func append(_ nodes: [RunNode]) {
        let n = nodes.count
        plan.nodes += nodes
        state += repeatElement(.waiting, count: n)
        remainingNeeds += repeatElement(0, count: n)
        dependents += repeatElement([], count: n)
        attempt += repeatElement(0, count: n)
        firstStart += repeatElement(nil, count: n)
        finishedAt += repeatElement(nil, count: n)
        durations += repeatElement(nil, count: n)
        values += repeatElement([], count: n)
        outputs += repeatElement([:], count: n)
        subscriptions += repeatElement(nil, count: n)
        announced += repeatElement(false, count: n)
        exitCodes += repeatElement(nil, count: n)
        attemptOutputs += repeatElement([], count: n)
    }

    /// Turns an expanded template into a group of its instances.
    func becomeGroup(_ node: Int, of instances: Range<Int>) {
        plan.nodes[node].isGroup = true
        plan.nodes[node].isExpanded = true
        plan.nodes[node].fanOut = nil
        plan.nodes[node].needs = Array(instances)
        // It ends as its instances did (each ran under the template's own `if`).
        plan.nodes[node].condition = .success
    }

    func expand(_ node: Int, _ fanOut: RunNode.FanOut) {
        let template = plan.nodes[node]
        let need = plan.nodes[fanOut.need].name
        let expression = "needs.\(need).outputs.\(fanOut.key)"
        guard let text = outputs[fanOut.need][fanOut.key] else {
            return fail(node, NodeError(.fanOut, "'\(need)' set no output '\(fanOut.key)' (\(expression)): "
                                        + "write \(fanOut.key)=[...] to $MOON_OUTPUT"), durationMilliseconds: 0)
        }
        let items: [String]
        switch FanOutItems.parse(text, expression: expression) {
        case .success(let parsed): items = parsed
        case .failure(let error): return fail(node, NodeError(.fanOut, error.message), durationMilliseconds: 0)
        }
        let first = plan.nodes.count
        launcher.expand(template: node, items: items, first: first)
        let instances = items.map { item in
            var copy = template
            copy.name = template.name + "[" + item + "]"
            copy.instance = RunEvent.Instance(template: template.name, item: item)
            copy.fanOut = nil
            return copy
        }
        append(instances)
        // Checked and remembered as the plan's nodes, when the checker takes them.
        if let checker = upToDate, planned == first, checker.expand(template: node, items: items, first: first) {
            planned = plan.nodes.count
        }
        let made = first..<(first + instances.count)
        becomeGroup(node, of: made)
        firstStart[node] = scheduler.now
        remainingNeeds[node] = instances.count
        for index in made { dependents[index] = [node] }
        emit(RunEvent(time: scheduler.now, kind: .expand(node: template.name, instances: instances.map(\.name))))
        guard !instances.isEmpty else { return succeedAtOnce(node) }
        for index in made { decide(index) }
    }
}

/// Barriers (`RunNode.isBarrier`): the one need that stands for a whole
/// fan-out between two fan-outs. It ends as a group does, without an
/// event or a count, and leaves its dependents the digest of what its
/// instances left, so their fingerprints change when any instance's do.
extension Runner {
    func barrierDone(_ node: Int) {
        let needs = plan.nodes[node].needs.map { need in
            (name: plan.nodes[need].name, outputs: outputs[need].map { ($0.key, $0.value) }, values: values[need])
        }
        values[node] = [BarrierDigest.of(needs)]
        releaseDependents(of: node)
        pump()
        finishIfDone()
    }
}
