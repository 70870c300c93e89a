import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport
import MoonEvents

/// Admission by memory and slots on virtual time (Runner+Admission).
@Suite struct AdmissionTests {
    static func sized(_ name: String, memory: Int64? = nil, slots: Int = 1, needs: [Int] = [], priority: Int = 0) -> RunNode {
        var run = node(name, needs: needs, priority: priority)
        run.memory = memory
        run.slots = slots
        return run
    }

    static func options(memory: Int64?, jobs: Int? = nil, warnings: Warnings? = nil) -> RunOptions {
        var options = RunOptions(jobs: jobs)
        options.resources.memory = memory
        if let warnings { options.resources.warn = { warnings.add($0) } }
        return options
    }

    final class Warnings: @unchecked Sendable {
        var lines: [String] = []
        func add(_ line: String) { lines.append(line) }
    }

    @Test func nodesStartOnlyWhileTheirMemoryFits() {
        let nodes = (0..<4).map { Self.sized("n\($0)", memory: 300) }
        let exact = RunHarness(nodes: nodes, options: Self.options(memory: 900))
        exact.run()
        #expect(exact.launcher.maxRunning == 3, "3 × 300 fits in 900")
        let less = RunHarness(nodes: nodes, options: Self.options(memory: 899))
        less.run()
        #expect(less.launcher.maxRunning == 2)
        #expect(less.startTime(of: "n3") == 1)
        #expect(less.summary?.ok == true)
    }

    @Test func aNodeLargerThanTheBudgetRunsAloneWithOneWarning() {
        let warnings = Warnings()
        let nodes = [Self.sized("big", memory: 5000, priority: 2), Self.sized("a", memory: 100), Self.sized("b", memory: 100)]
        let h = RunHarness(nodes: nodes, options: Self.options(memory: 1000, warnings: warnings))
        h.run()
        #expect(h.summary?.ok == true)
        #expect(h.trace.filter { $0.hasPrefix("start") } == ["start big#1", "start a#1", "start b#1"])
        #expect(h.startTime(of: "a") == 1, "nothing starts beside it")
        #expect(warnings.lines.count == 1)
        #expect(warnings.lines.first?.contains("node 'big' needs") == true)
    }

    @Test func cpusTakeThatManySlotsOfJobs() {
        let nodes = [Self.sized("wide", slots: 2), Self.sized("x"), Self.sized("y")]
        let h = RunHarness(nodes: nodes, options: Self.options(memory: nil, jobs: 2))
        h.run()
        #expect(h.startTime(of: "x") == 1, "wide took both slots")
        #expect(h.startTime(of: "y") == 1)
        // Wider than -j: it runs alone rather than never.
        let alone = RunHarness(nodes: [Self.sized("wider", slots: 8), Self.sized("z")], options: Self.options(memory: nil, jobs: 2))
        alone.run()
        #expect(alone.summary?.ok == true)
        #expect(alone.startTime(of: "z") == 1)
    }

    @Test func criticalPathPriorityStillDecidesAmongNodesThatFit() {
        let nodes = [Self.sized("low", memory: 500, priority: 1), Self.sized("high", memory: 500, priority: 9),
                     Self.sized("mid", memory: 500, priority: 5)]
        let h = RunHarness(nodes: nodes, options: Self.options(memory: 1000))
        h.run()
        #expect(h.startTime(of: "high") == 0)
        #expect(h.startTime(of: "mid") == 0)
        #expect(h.startTime(of: "low") == 1)
    }

    @Test func smallerNodesStartBesideAWaitingOneOnlyInWhatWasFree() {
        // `first` (300, 2 s) runs; `big` (800) waits for it. The small nodes
        // may use the 700 that is free (two of them), but what they free at
        // 1 s is kept for `big`: no small node starts again until it has.
        var nodes = [Self.sized("first", memory: 300, priority: 9), Self.sized("big", memory: 800, priority: 5)]
        nodes += (0..<6).map { Self.sized("s\($0)", memory: 300, priority: 1) }
        var scripts: [String: FakeLauncher.Script] = ["first": .init(duration: 2)]
        for i in 0..<6 { scripts["s\(i)"] = .init(duration: 1) }
        let h = RunHarness(nodes: nodes, options: Self.options(memory: 1000), scripts: scripts)
        h.run()
        let smallStarts = (0..<6).compactMap { h.startTime(of: "s\($0)") }.sorted()
        #expect(smallStarts.prefix(2) == [0, 0])
        #expect(h.startTime(of: "big") == 2, "it starts once `first` ended, not later")
        #expect(!smallStarts.contains(1), "what the small nodes freed was kept for the waiting one")
        #expect(smallStarts.dropFirst(2).allSatisfy { $0 >= 3 })
        #expect(h.summary?.ok == true)
    }

    @Test func theAvailableMemoryIsReadOnlyWhenANodeNeedsMemory() {
        let reads = Warnings()
        var options = RunOptions()
        options.resources.available = { reads.add("read"); return 1000 }
        let plain = RunHarness(nodes: [node("a"), node("b")], options: options)
        plain.run()
        #expect(plain.runner.budget == nil)
        #expect(reads.lines.isEmpty, "a graph without resources reads nothing")
        let sized = RunHarness(nodes: [Self.sized("a", memory: 600), Self.sized("b", memory: 600)], options: options)
        sized.run()
        #expect(reads.lines.count == 1)
        #expect(sized.runner.budget?.memory == 1000)
        #expect(sized.launcher.maxRunning == 1)
    }

    @Test func learnedMemoryAdmitsANodeThatDeclaresNone() {
        var options = Self.options(memory: 500)
        options.resources.learned = ["a": 300, "b": 300]
        let h = RunHarness(nodes: [node("a"), node("b")], options: options)
        h.run()
        #expect(h.launcher.maxRunning == 1)
    }

    /// What was learned is left aside when the largest `-j` of what may run
    /// fit in the budget together: no budget, and no count of OOM kills read
    /// as nodes start. When they do not fit, it admits as before.
    @Test func learnedMemoryThatAlwaysFitsKeepsNoBudget() {
        for (memory, jobs, kept) in [(Int64(1000), 2, false), (Int64(500), 2, true), (Int64(500), 1, false)] {
            let reads = Warnings()
            var options = Self.options(memory: memory, jobs: jobs)
            options.resources.learn = { ["a": 300, "b": 300] }
            options.resources.oomKills = { reads.add("oom_kill"); return 0 }
            let h = RunHarness(nodes: [node("a"), node("b")], options: options)
            h.run()
            #expect((h.runner.budget != nil) == kept)
            #expect(h.launcher.maxRunning == (kept ? 1 : jobs))
            #expect(reads.lines.isEmpty != kept)
        }
    }

    /// The bound (the most any node learned) is read first: when `-j` nodes
    /// that large fit, or nothing was measured, the nodes' history is not
    /// read; when they may not fit, or the bound is not known, it is, and
    /// decides as before.
    @Test func aBoundThatFitsReadsNoNodeOfTheHistory() {
        let cases: [(bound: Int64?, memory: Int64, read: Bool)] = [(300, 1000, false), (0, 10, false), (600, 1000, true), (nil, 1000, true),
                                                                   (.max, 1000, true)]
        for (bound, memory, read) in cases {
            let calls = Warnings()
            var options = Self.options(memory: memory, jobs: 2)
            options.resources.learnedBound = { bound }
            options.resources.learn = { calls.add("learn"); return ["a": 300, "b": 300] }
            let h = RunHarness(nodes: [node("a"), node("b")], options: options)
            h.run()
            #expect(calls.lines.isEmpty != read, "bound \(String(describing: bound)), memory \(memory)")
            #expect(h.runner.budget == nil && h.launcher.maxRunning == 2)
        }
    }

    /// Every attempt is killed by SIGKILL after a virtual second.
    final class KilledLauncher: NodeLauncher {
        let scheduler: TestScheduler
        init(scheduler: TestScheduler) { self.scheduler = scheduler }
        func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
            Signal { [scheduler] observer, lifetime in
                if let timer = scheduler.schedule(after: .seconds(1), {
                    observer.send(error: NodeError(.signal, "killed by SIGKILL", signal: 9))
                }) { lifetime.add(timer) }
            }
        }
        func settled(node: Int) -> Signal<Never> { Signal { observer, _ in observer.sendCompleted() } }
        func killNow() {}
    }

    @Test func aNodeKilledWhileTheOOMKillerRanIsReportedAsOutOfMemory() {
        for (kills, expected) in [((0, 1), true), ((3, 3), false)] {
            let scheduler = TestScheduler()
            let counter = Warnings()
            var options = Self.options(memory: 1000)
            options.resources.oomKills = { counter.add("read"); return counter.lines.count == 1 ? kills.0 : kills.1 }
            var events: [RunEvent] = []
            let runner = Runner(plan: RunPlan(graphName: "g", nodes: [Self.sized("hog", memory: 300)],
                                              queues: [QueueWidth(name: "default", concurrency: 8)]),
                                options: options, launcher: KilledLauncher(scheduler: scheduler), scheduler: scheduler) { events.append($0) }
            runner.start()
            scheduler.run()
            let message = events.compactMap { event -> String? in
                if case .error(_, _, let error) = event.kind { return error.message }
                return nil
            }.first
            if expected {
                #expect(message == "killed by SIGKILL: out of memory (the kernel's OOM killer ran while it ran; it was admitted with 300 B; declare more in resources: {memory})")
            } else {
                #expect(message == "killed by SIGKILL", "no OOM kill while it ran: no guess")
            }
        }
    }

    /// `hog` (300, retries once) is killed at 1 s; `a` and `b` run until 3 s
    /// and 5 s; `c` (600) waits for memory, `after` (needs `a`) for `a`.
    static func oomRun(killedForMemory: Bool) -> RunHarness {
        var hog = Self.sized("hog", memory: 300, priority: 9)
        hog.retry = RetryPolicy(times: 1)
        let nodes = [hog, Self.sized("a", memory: 100, priority: 5), Self.sized("b", memory: 100, priority: 5),
                     Self.sized("c", memory: 600, priority: 1), Self.sized("after", needs: [1])]
        var options = Self.options(memory: 1000)
        let scripts: [String: FakeLauncher.Script] = ["hog": .init(duration: 1, killedBy: [1: 9]), "a": .init(duration: 3),
                                                      "b": .init(duration: 5), "c": .init(duration: 1), "after": .init(duration: 1)]
        // The kernel's OOM count grows at 1 s, when `hog` is killed (or never).
        let clock = Clock()
        options.resources.oomKills = { killedForMemory && clock.seconds >= 1 ? 1 : 0 }
        let h = RunHarness(nodes: nodes, options: options, scripts: scripts)
        clock.scheduler = h.scheduler
        return h
    }

    final class Clock: @unchecked Sendable {
        var scheduler: TestScheduler?
        var seconds: TimeInterval { scheduler?.now.timeIntervalSinceReferenceDate ?? 0 }
    }

    @Test func aRetryAfterAnOOMKillWaitsForTheOthersAndRunsAloneWithTheWholeBudget() {
        let h = Self.oomRun(killedForMemory: true)
        h.run()
        #expect(h.summary?.ok == true, "\(h.trace)")
        #expect(h.startTime(of: "hog", attempt: 2) == 5, "it waits until `a` and `b` ended")
        // While it waited (1 s to 5 s) and ran (5 s to 6 s), nothing started,
        // not even `c`, which fitted in what it gave back, nor `after`, which needs no memory.
        #expect(h.startTime(of: "c") == 6)
        #expect(h.startTime(of: "after") == 6)
        #expect(h.launcher.starts.filter { $0.time > 1 && $0.time < 6 }.map(\.node) == [0])
        let retry = h.events.compactMap { event -> String? in
            if case .retry(_, _, _, let error) = event.kind { return error.message }
            return nil
        }
        #expect(retry == ["killed by SIGKILL: out of memory (the kernel's OOM killer ran while it ran; it was admitted with 300 B; "
                + "it retries alone with the whole budget of 1000 B; declare more in resources: {memory})"])
        #expect(h.runner.budget?.memoryInUse == 0)
        #expect(h.runner.memoryRetries.isIdle)
    }

    @Test func aRetryAfterAnyOtherFailureDoesNotWait() {
        let h = Self.oomRun(killedForMemory: false)
        h.run()
        #expect(h.summary?.ok == true, "\(h.trace)")
        #expect(h.startTime(of: "hog", attempt: 2) == 1, "a SIGKILL without the OOM killer retries at once")
        #expect(h.startTime(of: "c") == 2, "admitted by memory, as before")
        #expect(h.startTime(of: "after") == 3)
        #expect(h.trace.contains("retry hog#1 0ms"))
    }

    @Test func aRetryThatFailsAgainKeepsTheWholeBudgetAndSaysSo() {
        var hog = Self.sized("hog", memory: 300)
        hog.retry = RetryPolicy(times: 2)
        var options = Self.options(memory: 1000)
        let kills = Warnings()
        // Every attempt is killed while the OOM killer runs: the count grows at each read after a kill.
        options.resources.oomKills = { kills.add("read"); return kills.lines.count }
        let h = RunHarness(nodes: [hog, Self.sized("x", memory: 100)], options: options,
                           scripts: ["hog": .init(duration: 1, killedBy: [1: 9, 2: 9, 3: 9]), "x": .init(duration: 2)])
        h.run()
        #expect(h.summary?.ok == false)
        #expect(h.startTime(of: "hog", attempt: 2) == 2)
        #expect(h.startTime(of: "hog", attempt: 3) == 3, "it holds the whole budget: no wait")
        let message = h.events.compactMap { event -> String? in
            if case .error(_, _, let error) = event.kind { return error.message }
            return nil
        }.first
        #expect(message?.contains("it ran alone with the whole budget of 1000 B") == true, "\(message ?? "")")
        #expect(h.runner.budget?.memoryInUse == 0)
    }

    /// Watch mode: a run superseded while a retry waits for its whole
    /// budget hands the node over, and the retry goes ahead (it no longer
    /// waits for a run that ended).
    @Test func aRetryWaitingForTheWholeBudgetGoesAheadWhenHandedOver() {
        let h = Self.oomRun(killedForMemory: true)
        h.runner.keepsServices = true
        h.runner.start()
        h.scheduler.advance(by: .seconds(2))
        #expect(h.runner.memoryRetries.waiting == [0])
        h.runner.supersede(keeping: { $0 == "hog" })
        h.scheduler.advance(by: .seconds(10))
        #expect(h.startTime(of: "hog", attempt: 2) == 2)
        #expect(h.runner.memoryRetries.isIdle)
        #expect(h.runner.handedOver.map(\.name) == ["hog"])
    }
}
