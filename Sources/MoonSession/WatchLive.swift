import Foundation
import MoonCommand
import MoonEvents
import MoonReport
import MoonRun

/// The nodes of watch mode that run between runs: services a run handed
/// over when nothing else was left, and nodes a superseded run handed over
/// because the change did not affect them. The next run adopts those it
/// keeps; the others are stopped (SIGTERM, grace) and waited for, so a
/// restarted node never runs twice at once. Meanwhile their output goes
/// to `report`, and one that ends is reported as it ended.
package final class WatchLive {
    package private(set) var nodes: [String: LiveNode] = [:]
    /// Per node: the exit code its current attempt reported.
    private var exitCodes: [String: Int32] = [:]
    private let scheduler: DateScheduler
    private let report: (RunEvent) -> Void
    /// A node ended between runs: its name, and whether it succeeded.
    package var onEnded: ((String, Bool) -> Void)?
    /// The secrets of the run that handed the nodes over, hidden in what they
    /// print between runs as the runner hides them (docs/secrets.md).
    package var secretMask: SecretMask?
    /// Per node and stream: the end of a long line's part that may start a secret.
    private var maskCarry: [String: [UInt8]] = [:]

    package init(scheduler: DateScheduler, report: @escaping (RunEvent) -> Void) {
        self.scheduler = scheduler
        self.report = report
    }

    package var isEmpty: Bool { nodes.isEmpty }

    package func add(_ handed: [LiveNode]) {
        for node in handed {
            nodes[node.name] = node
            node.onEvent = { [weak self] event in self?.received(event, from: node.name) }
        }
    }

    /// Hands the named nodes to a run that adopts them.
    package func take(_ names: [String]) -> [LiveNode] {
        names.compactMap { name in
            exitCodes[name] = nil
            return nodes.removeValue(forKey: name).map { node in
                node.onEvent = nil
                return node
            }
        }
    }

    /// Stops the named nodes; `then` runs once their processes are gone.
    package func stop(_ names: [String], then: @escaping () -> Void) {
        let stopping = take(names)
        guard !stopping.isEmpty else { return then() }
        let settled = stopping.map { node -> Signal<Never> in
            node.stop()
            return node.settled
        }
        Signal.merge(settled).start { event in
            if case .completed = event { then() }
        }
    }

    package func stopAll(then: @escaping () -> Void) {
        stop(Array(nodes.keys), then: then)
    }

    private func received(_ event: Event<NodeOutput>, from name: String) {
        let now = scheduler.now
        switch event {
        case .next(.line(let stream, let text, let continued)):
            var shown: String? = text
            if let secretMask {
                let key = name + (stream == .stderr ? "\u{1}2" : "\u{1}1")
                var carry = maskCarry.removeValue(forKey: key) ?? []
                shown = secretMask.mask(part: text, continued: continued, carry: &carry)
                if continued { maskCarry[key] = carry }
            }
            guard let shown else { return }
            report(RunEvent(time: now, kind: .next(node: name, stream: stream, text: shown, continued: continued)))
        case .next(.value(let value)):
            report(RunEvent(time: now, kind: .next(node: name, stream: .value, text: secretMask?.mask(value) ?? value, continued: false)))
        case .next(.exited(let code)):
            exitCodes[name] = code
        case .next:
            break
        case .completed, .error:
            guard let node = nodes.removeValue(forKey: name) else { return }
            let duration = max(0, Int((now.timeIntervalSince(node.firstStart ?? now) * 1000).rounded()))
            if case .error(let error) = event {
                let failure = error as? NodeError ?? NodeError(.canceled, "\(error)")
                report(RunEvent(time: now, kind: .error(node: name, durationMilliseconds: duration, error: secretMask?.mask(failure) ?? failure)))
            } else {
                report(RunEvent(time: now, kind: .complete(node: name, durationMilliseconds: duration, exitCode: exitCodes[name],
                                                          outputs: [])))
            }
            exitCodes[name] = nil
            if case .error = event { onEnded?(name, false) } else { onEnded?(name, true) }
        }
    }
}
