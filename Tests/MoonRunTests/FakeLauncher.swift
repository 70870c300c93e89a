import Foundation
import MoonCommand
@testable import MoonRun
import MoonGraph

/// A launcher whose nodes take virtual time: each attempt of a node follows
/// its script (how long it runs, what it prints, how it ends). Cancelling an
/// attempt ends it at once, as a process killed by SIGTERM would.
final class FakeLauncher: NodeLauncher {
    struct Script {
        var duration: TimeInterval = 1
        var lines: [String] = []
        /// Exit code per attempt (1-based); missing attempts exit 0.
        var exitCodes: [Int: Int32] = [:]
        var values: [String] = []
        /// The process had exited already when it was cancelled (its exit
        /// was on its way): it ends as its script says, not as cancelled.
        var exitsDespiteCancel = false
        /// Virtual seconds the attempt waits for descriptors before its
        /// process starts (`AttemptEvents.waiting`); its duration follows.
        var waitsForResources: TimeInterval = 0
    }

    let scheduler: TestScheduler
    var scripts: [Int: Script] = [:]
    /// (virtual second, node, attempt) of every start, in order.
    private(set) var starts: [(time: TimeInterval, node: Int, attempt: Int)] = []
    private(set) var inputsSeen: [Int: NodeInputs] = [:]
    private(set) var running = 0
    private(set) var maxRunning = 0

    init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    final class Attempt: AttemptHandle {
        var timer: Disposable?
        var onCancel: (() -> Void)?
        func cancel(immediately: Bool) {
            timer?.dispose()
            onCancel?()
            onCancel = nil
        }
    }

    func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle {
        let script = scripts[node] ?? Script()
        starts.append((scheduler.now.timeIntervalSinceReferenceDate, node, attempt))
        inputsSeen[node] = inputs
        running += 1
        maxRunning = max(maxRunning, running)
        let handle = Attempt()
        var ended = false
        func end(_ result: AttemptResult) {
            guard !ended else { return }
            ended = true
            running -= 1
            events.finish(result)
        }
        if !script.exitsDespiteCancel {
            handle.onCancel = { [scheduler] in
                scheduler.schedule { end(.failure(NodeError(.signal, "killed by SIGTERM", signal: 15))) }
            }
        }
        if script.waitsForResources > 0 {
            scheduler.schedule { events.waiting(true) }
            scheduler.schedule(after: .seconds(script.waitsForResources)) { events.waiting(false) }
        }
        let timer = scheduler.schedule(after: .seconds(script.waitsForResources + script.duration)) {
            for line in script.lines { events.next(.stdout, line, false) }
            for value in script.values { events.next(.value, value, false) }
            let code = script.exitCodes[attempt] ?? 0
            end(code == 0 ? .success(exitCode: 0, outputs: [])
                          : .failure(NodeError(.exit, "exited with code \(code)", exitCode: code)))
        }
        if !script.exitsDespiteCancel { handle.timer = timer }
        return handle
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
        launcher = FakeLauncher(scheduler: scheduler)
        plan = RunPlan(graphName: "test", nodes: nodes, queues: queues)
        for (name, script) in scripts {
            if let index = nodes.firstIndex(where: { $0.name == name }) { launcher.scripts[index] = script }
        }
        var sink: [RunEvent] = []
        runner = Runner(plan: plan, options: options, launcher: launcher, scheduler: scheduler) { sink.append($0) }
        runnerEvents = { sink }
        runner.onFinish = { [weak self] in self?.summary = $0 }
    }

    private var runnerEvents: () -> [RunEvent] = { [] }

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
            case .graphStart, .graphComplete: return nil
            }
        }
    }

    func startTime(of name: String, attempt: Int = 1) -> TimeInterval? {
        guard let index = plan.nodes.firstIndex(where: { $0.name == name }) else { return nil }
        return launcher.starts.first { $0.node == index && $0.attempt == attempt }?.time
    }
}

/// A node on queue 0 needing the named nodes (resolved against `all`).
func node(_ name: String, needs: [Int] = [], queue: Int = 0, priority: Int = 0, condition: MoonGraph.RunCondition = .success,
          continueOnError: Bool = false, retry: RetryPolicy = .none, timeout: Duration? = nil) -> RunNode {
    RunNode(name: name, queue: queue, needs: needs, condition: condition, continueOnError: continueOnError,
            retry: retry, timeout: timeout, priority: priority, command: "fake \(name)")
}
