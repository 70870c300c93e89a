import Foundation
import MoonCommand
import MoonGraph
import MoonEvents
import MoonProcess
import MoonSystem

/// A node's run: the runner subscribes to its signal (`NodeSignal`), turns
/// its attempts' output into events, and ends it once its processes are
/// gone; a group ends at once.
extension Runner {
    /// Subscribes to the node's signal (`NodeSignal`): its attempts,
    /// timeout and retries. Its events come back to `received`, its end to
    /// `ended`.
    func startNode(_ node: Int) {
        state[node] = .running
        let spec = plan.nodes[node]
        if spec.isInteractive { handOverTerminal(node) }
        let inputs = spec.readsInputs ? inputs(of: spec) : NodeInputs(values: [])
        // Its events reach the run through a relay: in watch mode another run may take the node over.
        let relay = NodeRelay(runner: self, node: node)
        if live.keepsServices { live.relays[node] = relay }
        // Held weakly: a running attempt's callbacks hold this signal (to
        // retry it), and must not keep the launcher, whose release cancels
        // its commands' executions.
        let attempt = Signal<NodeOutput> { [weak launcher] observer, lifetime in
            guard let launcher else { return observer.send(error: CommandError.released) }
            let number = relay.attemptStarts()
            lifetime.add(launcher.attempt(node: node, number: number, inputs: inputs).start(observer))
        }
        let signal = NodeSignal.make(attempt: attempt, settled: launcher.settled(node: node), admitted: relay.admitted(), node: spec,
                                     scheduler: scheduler) { failed, delay, error in
            relay.retrying(failed: failed, delay: delay, error: error)
        }
        let subscription = signal.start { relay.receive($0) }
        // An attempt may have ended already (a failed spawn): keep only a live subscription.
        switch state[node] {
        case .running, .retrying: subscriptions[node] = subscription
        default: break
        }
        serviceStarted(node)
    }

    /// An event of the node's signal.
    func nodeEvent(_ event: Event<NodeOutput>, from node: Int) {
        switch event {
        case .next(let output): received(output, from: node)
        case .completed:
            ended(node, .success(exitCode: exitCodes[node], outputs: attemptOutputs[node]))
            attemptOutputs[node] = []
        case .error(let error):
            let error = NodeError(error)
            ended(node, .failure(secretMask?.mask(error) ?? error))
        }
    }

    /// An attempt of the node starts; returns its number.
    func attemptStarts(_ node: Int) -> Int {
        state[node] = .running
        attempt[node] += 1
        if firstStart[node] == nil { firstStart[node] = scheduler.now }
        // Whether the kernel killed it for memory is asked of each attempt.
        if attempt[node] > 1, oomKillsAtStart[node] != nil { oomKillsAtStart[node] = options.resources.oomKills() }
        // Only the attempt that succeeds counts: what a failed one sent is dropped.
        values[node] = []
        exitCodes[node] = nil
        attemptOutputs[node] = []
        announced[node] = false
        // A Slurm node's `start` waits for its job id; whatever the attempt
        // reports first announces it (without an id if srun never named one).
        if !launcher.announcesStart(node: node) { announce(node, jobID: nil) }
        return attempt[node]
    }

    func announce(_ node: Int, jobID: String?) {
        guard !announced[node] else { return }
        announced[node] = true
        let spec = plan.nodes[node]
        var event = RunEvent(time: scheduler.now, kind: .start(node: spec.name, queue: plan.queues[spec.queue].name,
                                                                attempt: attempt[node], command: masked(command(of: node)), jobID: jobID),
                             instance: spec.instance)
        if attempt[node] == 1, let started = firstStart[node] {
            event.waitedMilliseconds = milliseconds(from: readyTime(of: node), to: started)
        }
        emit(event)
    }

    /// When the node's needs were done (a service need: when it started),
    /// or the run began: its wait for a slot runs from there. Worked out
    /// only for a node that starts, from what the runner keeps anyway.
    func readyTime(of node: Int) -> Date {
        plan.nodes[node].needs.compactMap { finishedAt[$0] ?? firstStart[$0] }.max() ?? runStart
    }

    /// What the node's `start` event shows as its command.
    func command(of node: Int) -> String {
        launcher.command(node: node) ?? plan.nodes[node].command
    }

    private func received(_ output: NodeOutput, from node: Int) {
        let name = plan.nodes[node].name
        var output = output
        // Before anything sees it (reporters, the state, dependents, the cache): the run's secrets hidden.
        if let secretMask {
            guard let shown = masked(output, from: node, mask: secretMask) else { return }
            output = shown
        }
        switch output {
        case .line(let stream, let text, let continued):
            announce(node, jobID: nil)
            emit(RunEvent(time: scheduler.now, kind: .next(node: name, stream: stream, text: text, continued: continued)))
        case .partial(let stream, let text):
            // A line still being written: a `next` marked `partial`, for the live view only.
            announce(node, jobID: nil)
            emit(RunEvent(time: scheduler.now, kind: .next(node: name, stream: stream, text: text, continued: true), partial: true))
        case .value(let value):
            announce(node, jobID: nil)
            values[node].append(value)
            emit(RunEvent(time: scheduler.now, kind: .next(node: name, stream: .value, text: value, continued: false)))
        case .exited(let code): exitCodes[node] = code
        case .outputs(let outputs): attemptOutputs[node] = outputs
        case .job(let id): announce(node, jobID: id)
        case .waiting: break
        }
    }

    /// `text` with the run's secrets hidden.
    func masked(_ text: String) -> String {
        secretMask?.mask(text) ?? text
    }

    /// A node's output with the run's secrets hidden: a long line's parts
    /// as the whole line would be (`SecretMask.mask(part:…)`); nil output
    /// lines are parts held back whole.
    private func masked(_ output: NodeOutput, from node: Int, mask: SecretMask) -> NodeOutput? {
        switch output {
        case .line(let stream, let text, let continued):
            let key = 2 * node + (stream == .stderr ? 1 : 0)
            guard continued || maskCarry[key] != nil else { return .line(stream, mask.mask(text), continued: false) }
            var carry = maskCarry[key] ?? []
            let shown = mask.mask(part: text, continued: continued, carry: &carry)
            maskCarry[key] = continued ? carry : nil
            return shown.map { .line(stream, $0, continued: continued) }
        case .partial(let stream, let text):
            let truncated = text.utf8.count >= OutputLine.partialLimit - 3 || maskCarry[2 * node + (stream == .stderr ? 1 : 0)] != nil
            return .partial(stream, mask.mask(partial: text, truncated: truncated))
        case .value(let value): return .value(mask.mask(value))
        case .outputs(let outputs): return .outputs(mask.mask(outputs))
        case .exited, .job, .waiting: return output
        }
    }

    /// The `retry` operator is about to wait before the node's next attempt.
    /// A node the kernel killed for memory retries alone with the whole budget.
    func retrying(_ node: Int, failed: Int, delay: Duration, error: NodeError) {
        var error = secretMask?.mask(error) ?? error
        if killedForMemory(node, error) {
            error.message = outOfMemoryMessage(node, retrying: true)
            waitForWholeBudget(node)
        }
        announce(node, jobID: nil)
        state[node] = .retrying
        emit(RunEvent(time: scheduler.now, kind: .retry(node: plan.nodes[node].name, attempt: failed,
                                                       delayMilliseconds: delay.milliseconds, error: error),
                      instance: plan.nodes[node].instance))
    }

    /// The node's signal ended: the node ends once its processes are gone.
    private func ended(_ node: Int, _ result: NodeResult) {
        announce(node, jobID: nil)
        subscriptions[node] = nil
        settle(node, result)
    }

    /// Cancels the node by disposing its signal's subscription; it ends as
    /// cancelled once its processes are gone.
    func cancel(_ node: Int) {
        guard let subscription = subscriptions[node] else { return }
        subscriptions[node] = nil
        subscription.dispose()
        settle(node, nil)
    }

    /// Holds the node's slot until the processes of its attempts are gone
    /// (SIGTERM, then SIGKILL after the grace period), then ends it.
    private func settle(_ node: Int, _ result: NodeResult?) {
        state[node] = .settling
        settledSignal(node).start { [weak self] event in
            guard let self, case .completed = event else { return }
            self.finished(node, result ?? self.cancelledResult(node, message: self.stopMessage))
        }
    }

    private func finished(_ node: Int, _ result: NodeResult) {
        guard case .settling = state[node] else { return }
        // Its processes are gone: what they used is complete.
        let usage = launcher.usage(node: node)
        if let usage { usages[node] = usage }
        launcher.release(node: node)
        let now = scheduler.now
        let spec = plan.nodes[node]
        let duration = milliseconds(from: firstStart[node] ?? now, to: now)
        durations[node] = duration
        switch result {
        case .success(let exitCode, let outputs):
            for kv in outputs { self.outputs[node][kv.key] = kv.value }
            if let checker = upToDate, node < planned, !spec.isService {
                let values = values[node]
                // Behind a slow check the state is busy: not on the loop.
                offLoop { checker.succeeded(node: node, outputs: outputs, values: values) }
            }
            var event = RunEvent(time: now, kind: .complete(node: spec.name, durationMilliseconds: duration, exitCode: exitCode,
                                                            outputs: outputs), instance: spec.instance)
            event.stopped = stoppedByRun(node)
            event.usage = usage
            emit(event)
            nodeDone(node, .succeeded)
        case .failure(let error):
            fail(node, error, durationMilliseconds: duration, usage: usage)
        }
    }

    /// Emits the node's `error` and ends it failed (or cancelled).
    func fail(_ node: Int, _ error: NodeError, durationMilliseconds: Int, usage: NodeUsage? = nil) {
        let spec = plan.nodes[node]
        let masked = secretMask?.mask(error) ?? error
        let error = budget == nil ? masked : outOfMemory(node, masked)
        var event = RunEvent(time: scheduler.now, kind: .error(node: spec.name, durationMilliseconds: durationMilliseconds, error: error),
                             instance: spec.instance)
        event.usage = usage
        emit(event)
        if error.kind == .canceled {
            nodeDone(node, .canceled)
        } else {
            nodeDone(node, spec.continueOnError ? .tolerated : .failed)
        }
    }

    /// Whether every need of a group was up to date (or restored, or done in
    /// the run resumed): the group is then up to date too, so a run where
    /// nothing ran says so (`ok - 32 up to date`), not `1 succeeded`. (An
    /// expanded template, counted as its instances, completes as before.)
    func needsAllUpToDate(_ node: Int) -> Bool {
        let needs = plan.nodes[node].needs
        return !plan.nodes[node].isExpanded && !needs.isEmpty && needs.allSatisfy { need in
            switch state[need] {
            case .done(.skipped(.upToDate)), .done(.skipped(.cacheHit)), .done(.skipped(.resumed)): return true
            default: return false
            }
        }
    }

    /// A group's needs succeeded: it succeeds at once, taking no time and no job.
    func succeedAtOnce(_ node: Int) {
        let now = scheduler.now
        // An expanded template's time is its instances' span, from its expansion.
        if firstStart[node] == nil { firstStart[node] = now }
        let duration = milliseconds(from: firstStart[node] ?? now, to: now)
        durations[node] = duration
        if !plan.nodes[node].isBarrier {
            emit(RunEvent(time: now, kind: .complete(node: plan.nodes[node].name, durationMilliseconds: duration, exitCode: nil, outputs: []),
                          instance: plan.nodes[node].instance))
        }
        nodeDone(node, .succeeded)
    }

    private var stopMessage: String {
        switch stopReason {
        case .failure?: return "canceled because another node failed"
        case .interrupt(let signal)?: return "canceled by \(signalName(signal))"
        case .timeout?: return "canceled: the run's --timeout of \(options.timeout.map { DurationText.format($0) } ?? "?") expired"
        case .superseded?: return "canceled: its inputs changed, it runs again"
        case nil: return "canceled"
        }
    }
}
