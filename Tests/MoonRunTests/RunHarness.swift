import Foundation
import MoonCommand
import MoonEvents
@testable import MoonRun
import MoonGraph
import MoonTestSupport

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
            case .start(let n, _, let attempt, _, _): return "start \(n)#\(attempt)"
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
