import Foundation
import MoonCommand
import MoonEvents
@testable import MoonRun
import MoonTestSupport
import Testing

/// Services and nodes handed between runs (Runner+Live), on virtual time.
@Suite struct RunnerLiveTests {
    static func service(_ name: String) -> RunNode {
        var run = node(name)
        run.isService = true
        return run
    }

    @Test func aServiceReleasesItsDependentsWhenItStartsAndIsStoppedWhenNothingElseIsLeft() {
        let h = RunHarness(nodes: [Self.service("svc"), node("test", needs: [0])],
                           scripts: ["svc": .init(duration: 1000, diesAfterTerm: 0.5), "test": .init(duration: 2)])
        h.run()
        #expect(h.startTime(of: "test") == 0)
        #expect(h.trace == ["start svc#1", "start test#1", "complete test", "complete svc"])
        let stopped = h.events.first { $0.node == "svc" && $0.name == "complete" }
        #expect(stopped?.stopped == true)
        #expect(stopped?.time.timeIntervalSinceReferenceDate == 2.5)
        #expect(h.summary?.ok == true)
        #expect(h.summary?.counts.succeeded == 2)
        #expect(h.launcher.running == 0)
    }

    @Test func aServiceTakesNoJobOnceStarted() {
        let h = RunHarness(nodes: [Self.service("svc"), node("a"), node("b")], options: RunOptions(jobs: 1),
                           scripts: ["svc": .init(duration: 1000)])
        h.run()
        #expect(h.startTime(of: "a") == 0)
        #expect(h.startTime(of: "b") == 1)
        #expect(h.summary?.ok == true)
    }

    @Test func aServiceThatFailsOnItsOwnIsReportedAsItsExitSays() {
        let h = RunHarness(nodes: [Self.service("svc"), node("slow")], options: RunOptions(keepGoing: true),
                           scripts: ["svc": .init(duration: 1, exitCodes: [1: 3]), "slow": .init(duration: 5)])
        h.run()
        #expect(h.trace.contains("error svc exit"))
        #expect(h.trace.contains("complete slow"))
        #expect(h.summary?.ok == false)
    }

    @Test func inWatchModeServicesAreHandedOverStillRunning() {
        let h = RunHarness(nodes: [Self.service("svc"), node("test", needs: [0])], scripts: ["svc": .init(duration: 1000)])
        h.runner.keepsServices = true
        h.run(until: 5)
        #expect(h.summary?.ok == true)
        let complete = h.events.last { $0.name == "graph-complete" }
        #expect(complete?.running == ["svc"])
        #expect(h.runner.handedOver.map(\.name) == ["svc"])
        #expect(h.launcher.running == 1, "the service's process goes on")
    }

    @Test func aSupersededRunHandsOverTheNodesKeptAndTheNextRunAdoptsThem() {
        let h = RunHarness(nodes: [node("edited"), node("steady"), node("after", needs: [1])],
                           scripts: ["edited": .init(duration: 10), "steady": .init(duration: 10, lines: ["done"])])
        h.runner.keepsServices = true
        h.runner.start()
        h.scheduler.advance(by: .seconds(1))
        h.runner.supersede { $0 == "steady" }
        h.scheduler.advance(by: .seconds(1))
        #expect(h.summary?.stopReason == .superseded)
        #expect(h.trace == ["start edited#1", "start steady#1", "skip after canceled", "error edited canceled"])
        #expect(h.runnerEvents().last?.running == ["steady"])
        // The next run adopts `steady`: it is not started again, and ends there.
        var events: [RunEvent] = []
        var summary: Runner.Summary?
        let next = Runner(plan: h.plan, options: RunOptions(), launcher: h.launcher, scheduler: h.scheduler) { events.append($0) }
        next.onFinish = { summary = $0 }
        next.adopt(h.runner.handedOver)
        next.start()
        h.scheduler.advance(by: .seconds(100))
        #expect(h.launcher.starts.filter { $0.node == 1 }.count == 1)
        let carried = events.first { $0.node == "steady" && $0.name == "start" }
        #expect(carried?.carried == true)
        #expect(events.contains { $0.node == "steady" && $0.name == "next" })
        let steadyEnd = events.first { $0.node == "steady" && $0.name == "complete" }
        #expect(steadyEnd?.time.timeIntervalSinceReferenceDate == 10)
        #expect(events.contains { $0.node == "after" && $0.name == "complete" })
        #expect(summary?.ok == true)
    }

    @Test("superseded with every running node handed over (none cancelled), the run ends at once")
    func supersededKeepingAllEnds() {
        let h = RunHarness(nodes: [node("done"), node("steady")],
                           scripts: ["done": .init(duration: 1), "steady": .init(duration: 10)])
        h.runner.keepsServices = true
        h.runner.start()
        h.scheduler.advance(by: .seconds(2))
        h.runner.supersede { _ in true }
        #expect(h.summary?.stopReason == .superseded)
        #expect(h.runnerEvents().last?.running == ["steady"])
    }
}
