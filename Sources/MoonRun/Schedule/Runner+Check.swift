import Foundation
import MoonCommand
import MoonEvents

/// The up-to-date check between a node's needs ending and its start: asked
/// on the loop while it is quick, else on the worker pool with its verdict
/// coming back to the loop; a node found up to date or restored from the
/// cache is skipped with what its last success left.
extension Runner {
    /// What the needs of `spec` left it: values, outputs and results by need name.
    func inputs(of spec: RunNode) -> NodeInputs {
        // A built-in reads the values of each need: a barrier's instances,
        // not the barrier. Other nodes read a barrier as one need whose
        // value is the digest of what its instances left (`BarrierDigest`).
        var needs = spec.needs
        if spec.isBuiltin, needs.contains(where: { plan.nodes[$0].isBarrier }) {
            needs = needs.flatMap { plan.nodes[$0].isBarrier ? plan.nodes[$0].needs : [$0] }
        }
        var inputs = NodeInputs(values: needs.map { values[$0] }, needs: needs.map { plan.nodes[$0].name })
        // Sized once for a node of many needs (`reserveCapacity` is not specialised, `minimumCapacity` is).
        if needs.count > 8 {
            inputs.outputs = Dictionary(minimumCapacity: needs.count)
            inputs.results = Dictionary(minimumCapacity: needs.count)
        }
        for need in needs {
            let name = plan.nodes[need].name
            inputs.outputs[name] = outputs[need]
            guard case .done(let outcome) = state[need] else { continue }
            switch outcome {
            case .succeeded, .skipped(.upToDate), .skipped(.cacheHit), .skipped(.resumed): inputs.results[name] = .success
            case .tolerated, .failed: inputs.results[name] = .failure
            case .canceled: inputs.results[name] = .canceled
            case .skipped: inputs.results[name] = .skipped
            }
        }
        return inputs
    }

    /// Asks whether the node is up to date. Returns true when it is to run
    /// now; false when it was restored, or its check went off the loop
    /// (its verdict comes later, to `checked`).
    func check(_ node: Int, with checker: UpToDateChecking) -> Bool {
        let nodeInputs = inputs(of: plan.nodes[node])
        // On the loop while it is quick (and nothing is queued off it,
        // which holds the state); else on the worker, verdict later.
        if offLoopWork == 0, let verdict = checkInterruption.onLoop({ checker.upToDate(node: node, inputs: nodeInputs) }) {
            guard let restored = verdict else { return true }
            restore(node, restored)
            return false
        }
        state[node] = .checking
        offLoopWork += 1
        checkWorker.run { [weak self, scheduler] in
            let verdict = checker.upToDate(node: node, inputs: nodeInputs)
            scheduler.schedule { [weak self] in self?.checked(node, verdict) }
        }
        return false
    }

    func restore(_ node: Int, _ restored: RestoredResult) {
        for kv in restored.outputs { outputs[node][kv.key] = kv.value }
        values[node] = restored.values
        skip(node, restored.reason, restored: restored.cache)
    }

    /// The verdict of a check made off the loop. The run may have stopped
    /// meanwhile (its stop also cut the check short): then the node does
    /// not start.
    func checked(_ node: Int, _ verdict: RestoredResult?) {
        offLoopWork -= 1
        guard case .checking = state[node] else { return }
        let spec = plan.nodes[node]
        if let stop = stopReason, stop != .failure || spec.condition == .success {
            skip(node, .canceled)
        } else if let restored = verdict {
            restore(node, restored)
        } else {
            toRun(node)
            pump()
            finishIfDone()
        }
    }

    /// Runs `work` where it does not wait for a slow check: at once when
    /// none is off the loop, else on the worker after it.
    func offLoop(_ work: @escaping () -> Void) {
        guard offLoopWork > 0 else { return work() }
        offLoopWork += 1
        checkWorker.run { [weak self, scheduler] in
            work()
            scheduler.schedule { [weak self] in
                guard let self else { return }
                self.offLoopWork -= 1
                self.finishIfDone()
            }
        }
    }
}
