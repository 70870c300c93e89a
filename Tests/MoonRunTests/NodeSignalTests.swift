import Foundation
import MoonCommand
import MoonEvents
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport

/// A node's retry, timeout and cancellation go through the core's
/// operators and the disposal of its signal, on virtual time. The fake
/// processes take `diesAfterTerm` to exit after SIGTERM (SIGKILL at the
/// grace period): the node's slot and its next attempt wait for that.
@Suite struct NodeSignalTests {
    /// A timed-out attempt's process takes 3 s to exit: the retry (no
    /// delay) starts when it is gone, not while it still runs.
    @Test func aRetryStartsOnlyOnceTheTimedOutAttemptsProcessIsGone() {
        let h = RunHarness(nodes: [node("hang", retry: RetryPolicy(times: 1), timeout: .seconds(2))],
                           scripts: ["hang": .init(duration: 100, diesAfterTerm: 3)])
        h.run()
        #expect(h.trace == ["start hang#1", "retry hang#1 0ms", "start hang#2", "error hang timeout"])
        #expect(h.time(of: "retry", "hang") == 2)
        #expect(h.launcher.exits.first?.time == 5)
        #expect(h.startTime(of: "hang", attempt: 2) == 5)
        #expect(h.launcher.maxRunning == 1)
        // The second attempt times out at 7; its process is gone at 10.
        #expect(h.time(of: "error", "hang") == 10)
    }

    /// The retry waits for the longer of its delay and the teardown.
    @Test func aRetrysDelayLongerThanTheTeardownDecides() {
        let policy = RetryPolicy(times: 1, delay: .seconds(4))
        let h = RunHarness(nodes: [node("hang", retry: policy, timeout: .seconds(2))],
                           scripts: ["hang": .init(duration: 100, diesAfterTerm: 3)])
        h.run()
        #expect(h.trace.contains("retry hang#1 4000ms"))
        #expect(h.startTime(of: "hang", attempt: 2) == 6)
    }

    /// The timeout limits each attempt, from its start: it does not fire
    /// during the delay before a retry, nor count the delay.
    @Test func aNodesTimeoutDoesNotRunDuringARetrysDelay() {
        let policy = RetryPolicy(times: 1, delay: .seconds(5))
        let h = RunHarness(nodes: [node("flaky", retry: policy, timeout: .seconds(2))],
                           scripts: ["flaky": .init(duration: 1.5, exitCodes: [1: 1])])
        h.run()
        #expect(h.trace == ["start flaky#1", "retry flaky#1 5000ms", "start flaky#2", "complete flaky"])
        #expect(h.startTime(of: "flaky", attempt: 2) == 6.5)
        #expect(h.time(of: "complete", "flaky") == 8)
    }

    /// The run's `--timeout` during a retry's delay cancels the node at
    /// once: no process is left to wait for.
    @Test func theRunsTimeoutDuringARetrysDelayCancelsTheNodeAtOnce() {
        let policy = RetryPolicy(times: 3, delay: .seconds(10))
        let h = RunHarness(nodes: [node("flaky", retry: policy)], options: RunOptions(timeout: .seconds(3)),
                           scripts: ["flaky": .init(duration: 1, exitCodes: [1: 1])])
        h.run()
        #expect(h.trace == ["start flaky#1", "retry flaky#1 10000ms", "error flaky canceled"])
        #expect(h.time(of: "error", "flaky") == 3)
        #expect(h.launcher.starts.count == 1)
        #expect(h.summary?.stopReason == .timeout)
    }

    /// Fail-fast cancels `slow`, whose process takes 3 s to exit after
    /// SIGTERM: the clean-up node waiting for `slow`'s queue slot starts
    /// only then, and `slow` ends as cancelled then.
    @Test func aCancelledNodeHoldsItsSlotThroughTheGracePeriod() {
        let nodes = [node("bad"), node("slow", queue: 1), node("cleanup", needs: [0], queue: 1, condition: .always)]
        let h = RunHarness(nodes: nodes, queues: [QueueWidth(name: "default", concurrency: 8), QueueWidth(name: "one", concurrency: 1)],
                           scripts: ["bad": .init(duration: 1, exitCodes: [1: 1]), "slow": .init(duration: 100, diesAfterTerm: 3)])
        h.run()
        #expect(h.time(of: "error", "slow") == 4)
        #expect(h.startTime(of: "cleanup") == 4)
        #expect(h.trace.contains("error slow canceled"))
        #expect(h.trace.contains("complete cleanup"))
    }

    /// A process that ignores SIGTERM is killed when the grace period ends.
    @Test func anInterruptWaitsForTheGracePeriodAtMost() {
        let h = RunHarness(nodes: [node("stubborn")], options: RunOptions(grace: .seconds(5)),
                           scripts: ["stubborn": .init(duration: 100, diesAfterTerm: 1000)])
        h.runner.start()
        h.scheduler.advance(by: .seconds(1))
        h.runner.stop(.interrupt(signal: SIGINT))
        h.scheduler.advance(by: .seconds(100))
        #expect(h.trace == ["start stubborn#1", "error stubborn canceled"])
        #expect(h.time(of: "error", "stubborn") == 6)
    }

    /// A second interrupt during the grace period kills at once.
    @Test func aSecondInterruptDuringTheGracePeriodKillsAtOnce() {
        let h = RunHarness(nodes: [node("stubborn")], options: RunOptions(grace: .seconds(5)),
                           scripts: ["stubborn": .init(duration: 100, diesAfterTerm: 1000)])
        h.runner.start()
        h.scheduler.advance(by: .seconds(1))
        h.runner.stop(.interrupt(signal: SIGINT))
        h.scheduler.advance(by: .seconds(1))
        h.runner.stop(.interrupt(signal: SIGINT))
        h.scheduler.advance(by: .seconds(100))
        #expect(h.time(of: "error", "stubborn") == 2)
        #expect(h.summary?.stopReason == .interrupt(signal: SIGINT))
    }

    /// The run's `--timeout` cancels the running node; the run ends once
    /// its process is gone.
    @Test func theRunsTimeoutEndsTheRunOnceTheProcessesAreGone() {
        let h = RunHarness(nodes: [node("long")], options: RunOptions(timeout: .seconds(3)),
                           scripts: ["long": .init(duration: 60, diesAfterTerm: 2)])
        h.run()
        #expect(h.trace == ["start long#1", "error long canceled"])
        #expect(h.time(of: "error", "long") == 5)
        #expect(h.time(of: "graph-complete") == 5)
        guard case .error(_, _, let error)? = h.events.first(where: { $0.name == "error" })?.kind else {
            Issue.record("no error event")
            return
        }
        #expect(error.message == "canceled: the run's --timeout of 3s expired")
    }

    /// A timed-out node keeps its queue slot until its process is gone.
    @Test func aTimedOutNodeHoldsItsSlotUntilItsProcessIsGone() {
        let nodes = [node("hang", timeout: .seconds(2)), node("next")]
        let h = RunHarness(nodes: nodes, queues: [QueueWidth(name: "default", concurrency: 1)], options: RunOptions(keepGoing: true),
                           scripts: ["hang": .init(duration: 100, diesAfterTerm: 3)])
        h.run()
        #expect(h.startTime(of: "next") == 5)
        guard case .error(_, let ms, let error)? = h.events.first(where: { $0.name == "error" })?.kind else {
            Issue.record("no error event")
            return
        }
        #expect(error.kind == .timeout)
        #expect(error.message == "timed out after 2s")
        #expect(ms == 5000)
    }
}

extension RunHarness {
    /// The virtual second of the first event named `name` (of `node`).
    func time(of name: String, _ node: String? = nil) -> TimeInterval? {
        runnerEvents().first { $0.name == name && (node == nil || $0.node == node) }?.time.timeIntervalSinceReferenceDate
    }
}
