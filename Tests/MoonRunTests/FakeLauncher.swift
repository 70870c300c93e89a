import Foundation
import MoonCommand
import MoonEvents
@testable import MoonRun
import MoonGraph

/// A launcher whose nodes take virtual time: each attempt of a node follows
/// its script (how long it runs, what it prints, how it ends). Each attempt
/// is one fake process; cancelling the attempt (disposing its subscription)
/// sends it SIGTERM, after which it takes `diesAfterTerm` to exit, or is
/// SIGKILLed when the grace period ends first.
final class FakeLauncher: NodeLauncher {
    struct Script {
        var duration: TimeInterval = 1
        var lines: [String] = []
        /// Exit code per attempt (1-based); missing attempts exit 0.
        var exitCodes: [Int: Int32] = [:]
        var values: [String] = []
        /// What it writes to `$MOON_OUTPUT`, sent just before it completes.
        var outputs: [KeyValue] = []
        /// Virtual seconds the attempt waits for descriptors before its
        /// process starts (`NodeOutput.waiting`); its duration follows.
        var waitsForResources: TimeInterval = 0
        /// Virtual seconds its process takes to exit after SIGTERM.
        var diesAfterTerm: TimeInterval = 0
    }

    let scheduler: TestScheduler
    let grace: TimeInterval
    var scripts: [Int: Script] = [:]
    /// Scripts of nodes made during the run (instances of a dynamic fan-out), by name.
    var namedScripts: [String: Script] = [:]
    /// Every `expand` the runner made, in order.
    private(set) var expansions: [(template: Int, items: [String], first: Int)] = []
    private var instanceNames: [Int: String] = [:]
    /// The plan's node names, to name the instances of an expanded template.
    var runNames: [String] = []
    /// (virtual second, node, attempt) of every start, in order.
    private(set) var starts: [(time: TimeInterval, node: Int, attempt: Int)] = []
    /// (virtual second, node, attempt) of every process's exit, in order.
    private(set) var exits: [(time: TimeInterval, node: Int, attempt: Int)] = []
    private(set) var inputsSeen: [Int: NodeInputs] = [:]
    private(set) var running = 0
    private(set) var maxRunning = 0
    /// The processes not yet gone, by node.
    private var alive: [Int: [Process]] = [:]
    private var waiters: [Int: [() -> Void]] = [:]

    init(scheduler: TestScheduler, grace: TimeInterval = 5) {
        self.scheduler = scheduler
        self.grace = grace
    }

    final class Process {
        let node: Int
        let attempt: Int
        var pending: [Disposable] = []
        var isGone = false
        init(node: Int, attempt: Int) {
            self.node = node
            self.attempt = attempt
        }
    }

    func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
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
                if code == 0 {
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

    func settled(node: Int) -> Signal<Never> {
        Signal { [self] observer, _ in
            if alive[node, default: []].isEmpty {
                observer.sendCompleted()
            } else {
                waiters[node, default: []].append { observer.sendCompleted() }
            }
        }
    }

    func expand(template: Int, items: [String], first: Int) {
        expansions.append((template, items, first))
        for (i, item) in items.enumerated() { instanceNames[first + i] = "\(runNames[template])[\(item)]" }
    }

    func killNow() {
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

/// A runner over a fake launcher and a test scheduler, recording its events.
final class RunHarness {
    let scheduler = TestScheduler()
    let launcher: FakeLauncher
    var events: [RunEvent] = []
    var summary: Runner.Summary?
    let runner: Runner
    let plan: RunPlan

    init(nodes: [RunNode], queues: [QueueWidth] = [QueueWidth(name: "default", concurrency: 8)],
         options: RunOptions = RunOptions(), scripts: [String: FakeLauncher.Script] = [:]) {
        launcher = FakeLauncher(scheduler: scheduler, grace: options.grace.timeInterval)
        plan = RunPlan(graphName: "test", nodes: nodes, queues: queues)
        launcher.runNames = nodes.map(\.name)
        for (name, script) in scripts {
            if let index = nodes.firstIndex(where: { $0.name == name }) {
                launcher.scripts[index] = script
            } else {
                launcher.namedScripts[name] = script
            }
        }
        var sink: [RunEvent] = []
        runner = Runner(plan: plan, options: options, launcher: launcher, scheduler: scheduler) { sink.append($0) }
        runnerEvents = { sink }
        runner.onFinish = { [weak self] in self?.summary = $0 }
    }

    private(set) var runnerEvents: () -> [RunEvent] = { [] }

    @discardableResult
    func run(until seconds: TimeInterval = 1000) -> [RunEvent] {
        runner.start()
        scheduler.advance(by: .seconds(seconds))
        events = runnerEvents()
        return events
    }

    /// Events as short strings: "start a#1", "complete a", "error b timeout", "skip c upstream-failed".
    var trace: [String] {
        runnerEvents().compactMap { event in
            switch event.kind {
            case .start(let n, _, let attempt, _): return "start \(n)#\(attempt)"
            case .complete(let n, _, _, _): return "complete \(n)"
            case .error(let n, _, let error): return "error \(n) \(error.kind.rawValue)"
            case .skip(let n, let reason): return "skip \(n) \(reason.rawValue)"
            case .retry(let n, let attempt, let delay, _): return "retry \(n)#\(attempt) \(delay)ms"
            case .next(let n, let stream, let text, _): return "next \(n) \(stream.rawValue) \(text)"
            case .expand(let n, let instances): return "expand \(n) [\(instances.joined(separator: ", "))]"
            case .graphStart, .graphComplete, .watch: return nil
            }
        }
    }

    func startTime(of name: String, attempt: Int = 1) -> TimeInterval? {
        guard let index = runner.plan.nodes.firstIndex(where: { $0.name == name }) else { return nil }
        return launcher.starts.first { $0.node == index && $0.attempt == attempt }?.time
    }
}

/// A node on queue 0 needing the named nodes (resolved against `all`).
func node(_ name: String, needs: [Int] = [], queue: Int = 0, priority: Int = 0, condition: MoonGraph.RunCondition = .success,
          continueOnError: Bool = false, retry: RetryPolicy = .none, timeout: Duration? = nil) -> RunNode {
    RunNode(name: name, queue: queue, needs: needs, condition: condition, continueOnError: continueOnError,
            retry: retry, timeout: timeout, priority: priority, command: "fake \(name)")
}
