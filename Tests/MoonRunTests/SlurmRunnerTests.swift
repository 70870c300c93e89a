import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonEvents

/// The runner's side of Slurm nodes: their `start` waits for the job id.
@Suite struct SlurmRunnerTests {
    /// Node 0 is named job 42 after 0.5 s and succeeds at 1 s; node 1 fails
    /// at 0.2 s before Slurm named a job; node 2 is local.
    final class SlurmLikeLauncher: NodeLauncher {
        let scheduler: TestScheduler
        init(scheduler: TestScheduler) { self.scheduler = scheduler }

        func announcesStart(node: Int) -> Bool { node != 2 }

        func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
            Signal { [scheduler] observer, lifetime in
                switch node {
                case 0:
                    lifetime.add(scheduler.schedule(after: .milliseconds(500)) { observer.send(next: .job("42")) })
                    lifetime.add(scheduler.schedule(after: .seconds(1)) { observer.sendCompleted() })
                case 1:
                    lifetime.add(scheduler.schedule(after: .milliseconds(200)) {
                        observer.send(next: .line(.stderr, "srun: error: Unable to allocate resources", continued: false))
                        observer.send(error: NodeError(.spawn, "cannot run node 'b' on Slurm"))
                    })
                default:
                    lifetime.add(scheduler.schedule(after: .milliseconds(100)) { observer.sendCompleted() })
                }
            }
        }

        func settled(node: Int) -> Signal<Never> { .empty }
        func killNow() {}
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
            case .start(let n, _, _, _, let jobID): return "start \(n) \(jobID ?? "-")"
            case .next(let n, _, _, _): return "next \(n)"
            case .complete(let n, _, _, _): return "complete \(n)"
            case .error(let n, _, let error): return "error \(n) \(error.kind.rawValue)"
            default: return nil
            }
        }
        #expect(trace == ["start c -", "complete c", "start b -", "next b", "error b spawn", "start a 42", "complete a"])
        let startOfA = events.first { if case .start("a", _, _, _, _) = $0.kind { return true } else { return false } }
        #expect(startOfA?.time == Date(timeIntervalSinceReferenceDate: 0.5))
    }
}
