import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// The summary's `heaviest:` line names nodes that stand out, not a floor
/// every node shares (a node of `echo` peaks at moon's own size at the
/// spawn) nor CPU times next to none.
@Suite struct HeaviestLineTests {
    static let mib: Int64 = 1 << 20

    /// A ledger of nodes that ended with `usage` (peak MiB, CPU ms).
    func ledger(_ usages: [(String, Int64, Int)]) -> RunLedger {
        var ledger = RunLedger()
        ledger.apply(Fixture.at(0, .graphStart(graph: "g", nodes: usages.map(\.0), queues: [])))
        for (i, (node, mib, cpu)) in usages.enumerated() {
            ledger.apply(Fixture.at(1, .start(node: node, queue: "default", attempt: 1, command: "true")))
            var end = Fixture.at(10 + i, .complete(node: node, durationMilliseconds: 5, exitCode: 0, outputs: []))
            end.usage = NodeUsage(cpuUserMilliseconds: cpu, cpuSystemMilliseconds: 0, maxRSSBytes: mib * Self.mib)
            ledger.apply(end)
        }
        return ledger
    }

    @Test func nodesAtTheFloorWithNextToNoCPUAreNotHeavy() {
        #expect(RunSummary.heaviest(ledger([("one", 19, 1), ("four", 19, 1), ("three", 20, 0)])) == nil)
        // Above the floor but by less than 16 MiB, or less than twice it: not heavy either.
        #expect(RunSummary.heaviest(ledger([("a", 35, 2), ("b", 50, 3)])) == nil)
        #expect(RunSummary.heaviest(ledger([("a", 2, 2), ("b", 12, 3)])) == nil)
    }

    @Test func onlyWhatStandsOutIsNamed() {
        let both = RunSummary.heaviest(ledger([("big", 212, 80), ("echo", 19, 1), ("busy", 30, 1200), ("mid", 60, 150)]))
        #expect(both?.plain == "heaviest: memory big 212 MiB, mid 60 MiB; CPU busy 1.2s, mid 150ms")
        let memory = RunSummary.heaviest(ledger([("big", 212, 80), ("echo", 19, 1)]))
        #expect(memory?.plain == "heaviest: memory big 212 MiB")
        let cpu = RunSummary.heaviest(ledger([("busy", 20, 1200), ("echo", 19, 1)]))
        #expect(cpu?.plain == "heaviest: CPU busy 1.2s")
    }
}
