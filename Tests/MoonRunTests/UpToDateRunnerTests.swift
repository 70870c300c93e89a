import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport
import MoonEvents

/// A checker that says "up to date" for the nodes it is told, restoring fixed outputs.
final class FakeChecker: UpToDateChecking {
    var upToDate: [Int: RestoredResult] = [:]
    private(set) var asked: [Int] = []
    private(set) var succeeded: [Int] = []

    func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        asked.append(node)
        return upToDate[node]
    }

    func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        succeeded.append(node)
    }
}

/// The runner's side of incremental runs, on virtual time.
@Suite struct UpToDateRunnerTests {
    @Test func anUpToDateNodeIsSkippedAndItsDependentsRun() {
        let h = RunHarness(nodes: [node("gen"), node("use", needs: [0]), node("other")])
        let checker = FakeChecker()
        checker.upToDate[0] = RestoredResult(outputs: [KeyValue("sum", "2")], values: ["v"])
        h.runner.upToDate = checker
        h.run()
        #expect(h.trace == ["skip gen up-to-date", "start other#1", "start use#1", "complete other", "complete use"]
            || h.trace == ["skip gen up-to-date", "start use#1", "start other#1", "complete use", "complete other"])
        // Dependents see the restored outputs, values and a successful result.
        #expect(h.launcher.inputsSeen[1]?.outputs["gen"] == ["sum": "2"])
        #expect(h.launcher.inputsSeen[1]?.values == [["v"]])
        #expect(h.launcher.inputsSeen[1]?.results["gen"] == .success)
        #expect(h.summary?.ok == true)
        #expect(h.summary?.counts.skipped == 1)
        #expect(h.summary?.counts.succeeded == 2)
        #expect(checker.succeeded.sorted() == [1, 2])
        // Each node is asked once, when its needs have ended.
        #expect(checker.asked.sorted() == [0, 1, 2])
    }

    /// Checks and restores off the loop use a thread per CPU (2 at least, 8
    /// at most): on local files more threads only spin on the state's lock
    /// and the directory's; with a remote cache, whose lookups wait on the
    /// network, 8.
    @Test func checksOffTheLoopUseAThreadPerCPUUnlessTheyWaitOnTheNetwork() {
        #expect(Runner.checkWidth(waitsOnNetwork: false, cpus: 1) == 2)
        #expect(Runner.checkWidth(waitsOnNetwork: false, cpus: 4) == 4)
        #expect(Runner.checkWidth(waitsOnNetwork: false, cpus: 64) == 8)
        #expect(Runner.checkWidth(waitsOnNetwork: true, cpus: 2) == 8)
        final class RemoteChecker: UpToDateChecking {
            var waitsOnNetwork: Bool { true }
            func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? { nil }
            func succeeded(node: Int, outputs: [KeyValue], values: [String]) {}
        }
        let local = RunHarness(nodes: [node("a")])
        local.runner.upToDate = FakeChecker()
        #expect(local.runner.checkWorker.width == Runner.checkWidth(waitsOnNetwork: false))
        let remote = RunHarness(nodes: [node("a")])
        remote.runner.upToDate = RemoteChecker()
        #expect(remote.runner.checkWorker.width == 8)
    }

    @Test func aChainOfUpToDateNodesStartsNothing() {
        let h = RunHarness(nodes: [node("a"), node("b", needs: [0]), node("c", needs: [1])])
        let checker = FakeChecker()
        for i in 0..<3 { checker.upToDate[i] = RestoredResult() }
        h.runner.upToDate = checker
        h.run()
        #expect(h.trace == ["skip a up-to-date", "skip b up-to-date", "skip c up-to-date"])
        #expect(h.launcher.starts.isEmpty)
        #expect(h.summary?.ok == true)
        #expect(h.summary?.criticalPath == [])
    }

    /// An edit's sweep: the first stale node starts (its process spawns on
    /// the loop's next turn) before the unchanged nodes after it are asked.
    @Test func theFirstStaleNodeStartsBeforeTheRestOfTheSweep() {
        let h = RunHarness(nodes: [node("a"), node("b"), node("c"), node("d")])
        let checker = FakeChecker()
        for i in [1, 2, 3] { checker.upToDate[i] = RestoredResult() }
        h.runner.upToDate = checker
        h.runner.start()
        #expect(checker.asked == [0, 1], "b's skip let a start; c and d wait for the loop's next turn")
        h.scheduler.advance(by: .seconds(1000))
        #expect(checker.asked == [0, 1, 2, 3])
        #expect(h.trace == ["skip b up-to-date", "start a#1", "skip c up-to-date", "skip d up-to-date", "complete a"], "\(h.trace)")
    }

    @Test func nodesAfterAFailureAreNotAsked() {
        let h = RunHarness(nodes: [node("bad"), node("after", needs: [0])], scripts: ["bad": .init(exitCodes: [1: 1])])
        let checker = FakeChecker()
        h.runner.upToDate = checker
        h.run()
        #expect(checker.asked == [0])
        #expect(h.trace.last == "skip after upstream-failed")
    }
}
