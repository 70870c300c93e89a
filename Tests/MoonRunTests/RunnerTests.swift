import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport
import MoonEvents

/// The runner on virtual time: every test is instant and deterministic.
@Suite struct RunnerTests {
    @Test func needsRunBeforeTheirDependents() {
        let h = RunHarness(nodes: [node("a"), node("b", needs: [0]), node("c", needs: [1])])
        h.run()
        #expect(h.trace == ["start a#1", "complete a", "start b#1", "complete b", "start c#1", "complete c"])
        #expect(h.summary?.ok == true)
        #expect(h.summary?.counts.succeeded == 3)
        #expect(h.summary?.criticalPath == ["a", "b", "c"])
    }

    @Test func anUpstreamWithManyDependentsRunsOnce() {
        let h = RunHarness(nodes: [node("up"), node("x", needs: [0]), node("y", needs: [0]), node("z", needs: [1, 2])])
        h.run()
        #expect(h.launcher.starts.filter { $0.node == 0 }.count == 1)
        #expect(h.summary?.counts.succeeded == 4)
    }

    @Test func aQueueAdmitsAtMostItsConcurrency() {
        let nodes = (0..<6).map { node("n\($0)", queue: 1) }
        let h = RunHarness(nodes: nodes, queues: [QueueWidth(name: "default", concurrency: 8), QueueWidth(name: "db", concurrency: 2)])
        h.run()
        #expect(h.launcher.maxRunning == 2)
        // Three waves of two one-second nodes.
        #expect(h.startTime(of: "n5") == 2)
    }

    @Test func jobsCapAllQueuesTogether() {
        let nodes = [node("a"), node("b"), node("c", queue: 1), node("d", queue: 1)]
        let h = RunHarness(nodes: nodes, queues: [QueueWidth(name: "default", concurrency: 8), QueueWidth(name: "net", concurrency: 8)],
                           options: RunOptions(jobs: 3))
        h.run()
        #expect(h.launcher.maxRunning == 3)
        #expect(h.summary?.ok == true)
    }

    @Test func theLongestRemainingPathStartsFirst() {
        // `solo` comes first in the file, but the chain behind `head` is longer.
        let nodes = [node("solo", priority: 1), node("head", priority: 3), node("mid", needs: [1], priority: 2), node("tail", needs: [2], priority: 1)]
        let h = RunHarness(nodes: nodes, options: RunOptions(jobs: 1))
        h.run()
        #expect(h.trace.filter { $0.hasPrefix("start") }.first == "start head#1")
        // With the critical path first, two jobs finish in 3 s, not 4.
        let two = RunHarness(nodes: nodes, options: RunOptions(jobs: 2))
        two.run()
        #expect(two.startTime(of: "tail") == 2)
    }

    @Test func theCriticalPathIsTheLongestChainOfWorkNotTheLastToFinish() {
        // One job: `long` (3 s) runs first, `short` (1 s) waits for the job and
        // finishes last. The work that bounded `link` is `long`'s, not `short`'s.
        let nodes = [node("long", priority: 2), node("short", priority: 2), node("link", needs: [0, 1], priority: 1)]
        let h = RunHarness(nodes: nodes, options: RunOptions(jobs: 1),
                           scripts: ["long": .init(duration: 3), "short": .init(duration: 1), "link": .init(duration: 1)])
        h.run()
        #expect(h.trace.filter { $0.hasPrefix("complete") } == ["complete long", "complete short", "complete link"])
        #expect(h.summary?.criticalPath == ["long", "link"])
    }

    @Test func tiesGoToFileOrder() {
        let h = RunHarness(nodes: [node("b"), node("a"), node("c")], options: RunOptions(jobs: 1))
        h.run()
        #expect(h.trace.filter { $0.hasPrefix("start") } == ["start b#1", "start a#1", "start c#1"])
    }

    @Test func theFirstFailureCancelsRunningNodesAndSkipsTheRest() {
        let nodes = [node("bad"), node("slow"), node("after", needs: [0]), node("later", needs: [1])]
        let h = RunHarness(nodes: nodes, scripts: ["bad": .init(duration: 1, exitCodes: [1: 2]), "slow": .init(duration: 10)])
        h.run()
        #expect(h.trace.contains("error bad exit"))
        #expect(h.trace.contains("error slow canceled"))
        #expect(h.trace.contains("skip after upstream-failed"))
        #expect(h.trace.contains("skip later canceled"))
        #expect(h.summary?.ok == false)
        #expect(h.summary?.stopReason == .failure)
        #expect(h.summary?.counts == { var c = RunCounts(); c.failed = 1; c.canceled = 1; c.skipped = 2; return c }())
    }

    @Test func keepGoingRunsEverythingThatDoesNotDependOnAFailure() {
        let nodes = [node("bad"), node("slow"), node("after", needs: [0]), node("later", needs: [1])]
        let h = RunHarness(nodes: nodes, options: RunOptions(keepGoing: true),
                           scripts: ["bad": .init(duration: 1, exitCodes: [1: 1]), "slow": .init(duration: 10)])
        h.run()
        #expect(h.trace.contains("complete slow"))
        #expect(h.trace.contains("complete later"))
        #expect(h.trace.contains("skip after upstream-failed"))
        #expect(h.summary?.ok == false)
    }

    @Test func conditionsFollowHowNeedsEnded() {
        let nodes = [node("bad"), node("onFailure", needs: [0], condition: .failure),
                     node("always", needs: [0], condition: .always), node("onSuccess", needs: [0])]
        let h = RunHarness(nodes: nodes, scripts: ["bad": .init(exitCodes: [1: 1])])
        h.run()
        #expect(h.trace.contains("complete onFailure"))
        #expect(h.trace.contains("complete always"))
        #expect(h.trace.contains("skip onSuccess upstream-failed"))
    }

    @Test func aFailureNodeIsSkippedWhenNothingFailed() {
        let h = RunHarness(nodes: [node("good"), node("onFailure", needs: [0], condition: .failure)])
        h.run()
        #expect(h.trace.contains("skip onFailure condition"))
        #expect(h.summary?.ok == true)
    }

    @Test func continueOnErrorDoesNotFailTheRun() {
        let nodes = [node("flaky", continueOnError: true), node("next", needs: [0])]
        let h = RunHarness(nodes: nodes, scripts: ["flaky": .init(exitCodes: [1: 1])])
        h.run()
        #expect(h.trace.contains("error flaky exit"))
        #expect(h.trace.contains("complete next"))
        #expect(h.summary?.ok == true)
        #expect(h.summary?.counts.failed == 1)
    }

    @Test func retriesWaitDelayTimesBackoff() {
        let policy = RetryPolicy(times: 3, delay: .seconds(1), backoff: 2, maxDelay: .seconds(3))
        let h = RunHarness(nodes: [node("flaky", retry: policy)],
                           scripts: ["flaky": .init(duration: 1, exitCodes: [1: 1, 2: 1, 3: 1])])
        h.run()
        #expect(h.trace.filter { $0.hasPrefix("retry") } == ["retry flaky#1 1000ms", "retry flaky#2 2000ms", "retry flaky#3 3000ms"])
        // Attempts start at 0, then 1 s run + 1 s wait, + 1 + 2, + 1 + 3.
        #expect(h.startTime(of: "flaky", attempt: 2) == 2)
        #expect(h.startTime(of: "flaky", attempt: 3) == 5)
        #expect(h.startTime(of: "flaky", attempt: 4) == 9)
        #expect(h.trace.last == "complete flaky")
        #expect(h.summary?.ok == true)
    }

    @Test func retriesRunOutAndTheNodeFails() {
        let h = RunHarness(nodes: [node("bad", retry: RetryPolicy(times: 1))], scripts: ["bad": .init(exitCodes: [1: 1, 2: 3])])
        h.run()
        #expect(h.trace == ["start bad#1", "retry bad#1 0ms", "start bad#2", "error bad exit"])
    }

    @Test func aTimedOutAttemptIsCancelledAndCountsAsAFailure() {
        let h = RunHarness(nodes: [node("hang", retry: RetryPolicy(times: 1), timeout: .seconds(2))],
                           scripts: ["hang": .init(duration: 100)])
        h.run()
        #expect(h.trace == ["start hang#1", "retry hang#1 0ms", "start hang#2", "error hang timeout"])
        #expect(h.startTime(of: "hang", attempt: 2) == 2)
        guard case .error(_, let ms, let error)? = h.events.first(where: { $0.name == "error" })?.kind else {
            Issue.record("no error event"); return
        }
        #expect(error.message == "timed out after 2s")
        #expect(ms == 4000)
    }

    @Test func anInterruptCancelsEverything() {
        let nodes = [node("a"), node("b"), node("c", needs: [0])]
        let h = RunHarness(nodes: nodes, scripts: ["a": .init(duration: 5), "b": .init(duration: 5)])
        h.runner.start()
        h.scheduler.advance(by: .seconds(1))
        h.runner.stop(.interrupt(signal: 2))
        h.scheduler.advance(by: .seconds(10))
        #expect(h.trace == ["start a#1", "start b#1", "error a canceled", "skip c canceled", "error b canceled"])
        #expect(h.summary?.stopReason == .interrupt(signal: 2))
        #expect(h.summary?.ok == false)
    }

    @Test func theRunTimeoutStopsTheRun() {
        let h = RunHarness(nodes: [node("long")], options: RunOptions(timeout: .seconds(3)), scripts: ["long": .init(duration: 60)])
        h.run()
        #expect(h.trace == ["start long#1", "error long canceled"])
        #expect(h.summary?.stopReason == .timeout)
    }

    /// The run's timeout expires at the very moment the last node would
    /// exit (its timer runs first): the node is cancelled, and the events,
    /// the summary and the exit code (from `stopReason`) all say the run
    /// timed out.
    @Test func aRunTimeoutAtTheLastNodesEndGivesOneVerdict() {
        let h = RunHarness(nodes: [node("a"), node("b", needs: [0])], options: RunOptions(timeout: .seconds(2)),
                           scripts: ["a": .init(duration: 1), "b": .init(duration: 1)])
        h.run()
        #expect(h.trace == ["start a#1", "complete a", "start b#1", "error b canceled"])
        #expect(h.summary?.ok == false)
        #expect(h.summary?.stopReason == .timeout)
        guard case .graphComplete(let ok, _, let counts, _)? = h.events.last?.kind else {
            Issue.record("no graph-complete")
            return
        }
        #expect(!ok)
        #expect(counts.succeeded == 1 && counts.canceled == 1)
    }

    /// A run timeout later than every node's end stops nothing: the run is ok.
    @Test func aRunTimeoutThatStopsNothingLeavesTheRunOk() {
        let h = RunHarness(nodes: [node("a"), node("b", needs: [0])], options: RunOptions(timeout: .seconds(2.001)),
                           scripts: ["a": .init(duration: 1), "b": .init(duration: 1)])
        h.run()
        #expect(h.trace == ["start a#1", "complete a", "start b#1", "complete b"])
        #expect(h.summary?.ok == true)
        #expect(h.summary?.stopReason == nil)
    }

    /// The same timeout a moment earlier stops the node: a timed-out run.
    @Test func aRunTimeoutThatStopsANodeFailsTheRun() {
        let h = RunHarness(nodes: [node("a"), node("b", needs: [0])], options: RunOptions(timeout: .seconds(2)),
                           scripts: ["a": .init(duration: 1), "b": .init(duration: 1.001)])
        h.run()
        #expect(h.trace == ["start a#1", "complete a", "start b#1", "error b canceled"])
        #expect(h.summary?.ok == false)
        #expect(h.summary?.stopReason == .timeout)
    }

    /// A node that waits 5 s for descriptors, then runs 1.5 s, does not
    /// time out with `timeout: 2s`: the timeout counts from its real start.
    @Test func aNodesTimeoutStartsWhenItsProcessReallyStarts() {
        let h = RunHarness(nodes: [node("late", timeout: .seconds(2)), node("slow", timeout: .seconds(2))],
                           scripts: ["late": .init(duration: 1.5, waitsForResources: 5),
                                     "slow": .init(duration: 2.5, waitsForResources: 5)])
        h.run()
        #expect(h.trace == ["start late#1", "start slow#1", "complete late", "error slow timeout"])
        guard case .error(_, let duration, _)? = h.events.first(where: { $0.name == "error" })?.kind else {
            Issue.record("no error event")
            return
        }
        #expect(duration == 7000)
    }

    @Test func valuesFlowToDependents() {
        let nodes = [node("zero"), node("five"), node("final", needs: [0, 1])]
        let h = RunHarness(nodes: nodes, scripts: ["zero": .init(values: ["0"]), "five": .init(values: ["5"])])
        h.run()
        #expect(h.launcher.inputsSeen[2]?.values == [["0"], ["5"]])
    }

    @Test func eventsOfANodeAreInCausalOrder() {
        let h = RunHarness(nodes: [node("talk")], scripts: ["talk": .init(lines: ["one", "two"])])
        h.run()
        #expect(h.events.first?.name == "graph-start")
        #expect(h.trace == ["start talk#1", "next talk stdout one", "next talk stdout two", "complete talk"])
        #expect(h.events.last?.name == "graph-complete")
    }
}
