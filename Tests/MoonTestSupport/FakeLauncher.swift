import Foundation
import MoonCommand
import MoonEvents
import MoonRun
import MoonGraph

/// A launcher whose nodes take virtual time: each attempt of a node follows
/// its script (how long it runs, what it prints, how it ends). Each attempt
/// is one fake process; cancelling the attempt (disposing its subscription)
/// sends it SIGTERM, after which it takes `diesAfterTerm` to exit, or is
/// SIGKILLed when the grace period ends first.
package final class FakeLauncher: NodeLauncher {
    package struct Script {
        package var duration: TimeInterval = 1
        package var lines: [String] = []
        /// Exit code per attempt (1-based); missing attempts exit 0.
        package var exitCodes: [Int: Int32] = [:]
        package var values: [String] = []
        /// What it writes to `$MOON_OUTPUT`, sent just before it completes.
        package var outputs: [KeyValue] = []
        /// Virtual seconds the attempt waits for descriptors before its
        /// process starts (`NodeOutput.waiting`); its duration follows.
        package var waitsForResources: TimeInterval = 0
        /// Virtual seconds its process takes to exit after SIGTERM.
        package var diesAfterTerm: TimeInterval = 0
        /// A signal that kills the attempt (1-based) at its end, instead of an exit.
        package var killedBy: [Int: Int32] = [:]

        package init(duration: TimeInterval = 1, lines: [String] = [], exitCodes: [Int: Int32] = [:], values: [String] = [],
                     outputs: [KeyValue] = [], waitsForResources: TimeInterval = 0, diesAfterTerm: TimeInterval = 0,
                     killedBy: [Int: Int32] = [:]) {
            self.duration = duration
            self.lines = lines
            self.exitCodes = exitCodes
            self.values = values
            self.outputs = outputs
            self.waitsForResources = waitsForResources
            self.diesAfterTerm = diesAfterTerm
            self.killedBy = killedBy
        }
    }

    package let scheduler: TestScheduler
    package let grace: TimeInterval
    package var scripts: [Int: Script] = [:]
    /// Scripts of nodes made during the run (instances of a dynamic fan-out), by name.
    package var namedScripts: [String: Script] = [:]
    /// Every `expand` the runner made, in order.
    package private(set) var expansions: [(template: Int, items: [String], first: Int)] = []
    private var instanceNames: [Int: String] = [:]
    /// The plan's node names, to name the instances of an expanded template.
    package var runNames: [String] = []
    /// (virtual second, node, attempt) of every start, in order.
    package private(set) var starts: [(time: TimeInterval, node: Int, attempt: Int)] = []
    /// (virtual second, node, attempt) of every process's exit, in order.
    package private(set) var exits: [(time: TimeInterval, node: Int, attempt: Int)] = []
    package private(set) var inputsSeen: [Int: NodeInputs] = [:]
    package private(set) var running = 0
    package private(set) var maxRunning = 0
    /// The processes not yet gone, by node.
    private var alive: [Int: [Process]] = [:]
    private var waiters: [Int: [() -> Void]] = [:]

    package init(scheduler: TestScheduler, grace: TimeInterval = 5) {
        self.scheduler = scheduler
        self.grace = grace
    }

    package final class Process {
        package let node: Int
        package let attempt: Int
        package var pending: [Disposable] = []
        package var isGone = false
        package init(node: Int, attempt: Int) {
            self.node = node
            self.attempt = attempt
        }
    }

    package func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
        Signal { [self] observer, lifetime in
            let script = scripts[node] ?? instanceNames[node].flatMap { namedScripts[$0] } ?? Script()
            starts.append((now, node, number))
            inputsSeen[node] = inputs
            let process = Process(node: node, attempt: number)
            running += 1
            maxRunning = max(maxRunning, running)
            alive[node, default: []].append(process)
            if script.waitsForResources > 0 {
                observer.send(next: .waiting(true))
                process.pending.append(scheduler.schedule(after: .seconds(script.waitsForResources)) {
                    observer.send(next: .waiting(false))
                }!)
            }
            process.pending.append(scheduler.schedule(after: .seconds(script.waitsForResources + script.duration)) { [self] in
                for line in script.lines { observer.send(next: .line(.stdout, line, continued: false)) }
                for value in script.values { observer.send(next: .value(value)) }
                let code = script.exitCodes[number] ?? 0
                gone(process)
                if let signal = script.killedBy[number] {
                    observer.send(error: NodeError(.signal, "killed by signal \(signal)", signal: signal))
                } else if code == 0 {
                    observer.send(next: .exited(code: 0))
                    if !script.outputs.isEmpty { observer.send(next: .outputs(script.outputs)) }
                    observer.sendCompleted()
                } else {
                    observer.send(error: NodeError(.exit, "exited with code \(code)", exitCode: code))
                }
            }!)
            lifetime.add { [self] in
                guard !process.isGone else { return }
                // SIGTERM: it exits after its own delay, or at SIGKILL.
                for timer in process.pending { timer.dispose() }
                process.pending = [scheduler.schedule(after: .seconds(min(script.diesAfterTerm, grace))) { [self] in gone(process) }!]
            }
        }
    }

    package func settled(node: Int) -> Signal<Never> {
        Signal { [self] observer, _ in
            if alive[node, default: []].isEmpty {
                observer.sendCompleted()
            } else {
                waiters[node, default: []].append { observer.sendCompleted() }
            }
        }
    }

    package func expand(template: Int, items: [String], first: Int) {
        expansions.append((template, items, first))
        for (i, item) in items.enumerated() { instanceNames[first + i] = "\(runNames[template])[\(item)]" }
    }

    package func killNow() {
        for process in alive.values.flatMap({ $0 }) {
            for timer in process.pending { timer.dispose() }
            gone(process)
        }
    }

    private var now: TimeInterval { scheduler.now.timeIntervalSinceReferenceDate }

    private func gone(_ process: Process) {
        guard !process.isGone else { return }
        process.isGone = true
        running -= 1
        exits.append((now, process.node, process.attempt))
        alive[process.node]?.removeAll { $0 === process }
        guard alive[process.node]?.isEmpty ?? true else { return }
        let ready = waiters.removeValue(forKey: process.node) ?? []
        for waiter in ready { waiter() }
    }
}
