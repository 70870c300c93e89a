import Foundation
import MoonCommand
import MoonEvents
import MoonGraph
import Testing
@testable import MoonRun

/// `moon simulate`'s engine: the real runner on virtual time with recorded durations.
@Suite struct SimulationTests {
    static let plan = RunPlan(graphName: "g", nodes: [
        node("a", priority: 3), node("b", needs: [0], priority: 1), node("c", priority: 2), node("d", needs: [1, 2], priority: 0),
    ], queues: [QueueWidth(name: "default", concurrency: 8)])

    @Test func theWallTimeFollowsTheScheduler() {
        let simulation = Simulation(plan: Self.plan, durations: ["a": 1000, "b": 500, "c": 2000, "d": 250])
        let one = simulation.run(options: RunOptions(jobs: 1))
        #expect(one.wallMilliseconds == 3750, "one job: the sum")
        let two = simulation.run(options: RunOptions(jobs: 2))
        // a and c at 0; b at 1 s; d after c at 2 s.
        #expect(two.wallMilliseconds == 2250)
        #expect(two.criticalPath == ["c", "d"])
        #expect(two.jobs == 2)
        #expect(two.queues.first?.capacity == 2)
        // d waited for c after b had ended: 2000 - 1500.
        #expect(two.waits.contains(Simulation.Wait(node: "d", milliseconds: 500, reason: "need c")))
    }

    /// A node wider than its queue runs alone on it: it holds the queue, not its `cpus`.
    @Test func aNodeWiderThanItsQueueHoldsTheQueueOnly() {
        var wide = node("q", queue: 1)
        wide.slots = 2
        let plan = RunPlan(graphName: "g", nodes: [wide, node("long")],
                           queues: [QueueWidth(name: "default", concurrency: 8), QueueWidth(name: "one", concurrency: 1)])
        let result = Simulation(plan: plan, durations: ["q": 200, "long": 400]).run(options: RunOptions(jobs: 4))
        #expect(result.wallMilliseconds == 400)
        let one = result.queues.first { $0.name == "one" }
        #expect(one.map { abs($0.utilisation - 0.5) < 0.01 } == true, "\(result.queues)")
    }

    @Test func aNodeNeverSeenTakesTheDefault() {
        let simulation = Simulation(plan: Self.plan, durations: [:])
        #expect(simulation.estimates.allSatisfy { $0 == Simulation.Estimate(seconds: Simulation.defaultDuration, source: .default) })
        #expect(simulation.run(options: RunOptions(jobs: 1)).wallMilliseconds == 4000)
    }

    @Test func anInstanceNeverSeenTakesItsSiblingsMedian() {
        var fresh = node("t[z]")
        fresh.instance = RunEvent.Instance(template: "t", item: "z")
        let plan = RunPlan(graphName: "g", nodes: [fresh], queues: [QueueWidth(name: "default", concurrency: 8)])
        let simulation = Simulation(plan: plan, durations: ["t[a]": 100, "t[b]": 300, "t[c]": 900])
        #expect(simulation.estimates == [Simulation.Estimate(seconds: 0.3, source: .siblings)])
    }

    @Test func waitsForMemorySayMemory() {
        var a = node("a", priority: 2)
        a.memory = 600
        var b = node("b", priority: 1)
        b.memory = 600
        let plan = RunPlan(graphName: "g", nodes: [a, b], queues: [QueueWidth(name: "default", concurrency: 8)])
        var options = RunOptions()
        options.resources.memory = 1000
        let result = Simulation(plan: plan, durations: ["a": 1000, "b": 1000]).run(options: options)
        #expect(result.wallMilliseconds == 2000)
        #expect(result.memory == 1000)
        #expect(result.waits == [Simulation.Wait(node: "b", milliseconds: 1000, reason: "memory")])
    }

    @Test func aDynamicFanOutExpandsToItsRecordedInstances() {
        var fan = node("f", needs: [0])
        fan.fanOut = RunNode.FanOut(need: 0, key: "files")
        let plan = RunPlan(graphName: "g", nodes: [node("list"), fan], queues: [QueueWidth(name: "default", concurrency: 8)])
        let result = Simulation(plan: plan, durations: ["list": 100, "f[x]": 1000, "f[y]": 2000]).run(options: RunOptions())
        #expect(result.wallMilliseconds == 2100)
        #expect(result.criticalPath == ["list", "f[y]"] || result.criticalPath.first == "list")
    }
}
