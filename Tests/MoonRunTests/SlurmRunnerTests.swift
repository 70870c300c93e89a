import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun

/// The runner's side of Slurm nodes: their `start` waits for the job id.
@Suite struct SlurmRunnerTests {
    /// Node 0 is named job 42 after 0.5 s and succeeds at 1 s; node 1 fails
    /// at 0.2 s before Slurm named a job; node 2 is local.
    final class SlurmLikeLauncher: NodeLauncher {
        let scheduler: TestScheduler
        init(scheduler: TestScheduler) { self.scheduler = scheduler }

        final class Attempt: AttemptHandle { func cancel(immediately: Bool) {} }

        func announcesStart(node: Int) -> Bool { node != 2 }

        func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle {
            switch node {
            case 0:
                _ = scheduler.schedule(after: .seconds(0.5)) { events.started("42") }
                _ = scheduler.schedule(after: .seconds(1)) { events.finish(.success(exitCode: 0, outputs: [])) }
            case 1:
                _ = scheduler.schedule(after: .seconds(0.2)) {
                    events.next(.stderr, "srun: error: Unable to allocate resources", false)
                    events.finish(.failure(NodeError(.spawn, "cannot run node 'b' on Slurm")))
                }
            default:
                _ = scheduler.schedule(after: .seconds(0.1)) { events.finish(.success(exitCode: 0, outputs: [])) }
            }
            return Attempt()
        }
    }

    @Test func aSlurmNodesStartCarriesItsJobIdAndComesBeforeAnythingElseOfIt() {
        let scheduler = TestScheduler()
        let launcher = SlurmLikeLauncher(scheduler: scheduler)
        let plan = RunPlan(graphName: "g", nodes: [node("a"), node("b"), node("c")],
                           queues: [QueueWidth(name: "default", concurrency: 8)])
        var events: [RunEvent] = []
        let runner = Runner(plan: plan, options: RunOptions(keepGoing: true), launcher: launcher, scheduler: scheduler) { events.append($0) }
        runner.start()
        scheduler.advance(by: .seconds(10))
        let trace = events.compactMap { event -> String? in
            switch event.kind {
            case .start(let n, _, _, _): return "start \(n) \(event.jobID ?? "-")"
            case .next(let n, _, _, _): return "next \(n)"
            case .complete(let n, _, _, _): return "complete \(n)"
            case .error(let n, _, let error): return "error \(n) \(error.kind.rawValue)"
            default: return nil
            }
        }
        #expect(trace == ["start c -", "complete c", "start b -", "next b", "error b spawn", "start a 42", "complete a"])
        let startOfA = events.first { if case .start("a", _, _, _) = $0.kind { return true } else { return false } }
        #expect(startOfA?.time == Date(timeIntervalSinceReferenceDate: 0.5))
    }
}
