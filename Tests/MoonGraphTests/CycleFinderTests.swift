import MoonDocument
import Testing
@testable import MoonGraph

@Suite struct CycleFinderTests {
    @Test func reportsACycleWithItsPathAtItsFirstNode() {
        let result = decode(doc([
            "a": ["run": "x", "needs": "b"],
            "b": ["run": "x", "needs": "c"],
            "c": ["run": "x", "needs": "a"],
            "d": ["run": "x", "needs": "a"],
        ]))
        #expect(lines(result) == ["3:3: error: dependency cycle: a -> b -> c -> a"])
        #expect(result.diagnostics[0].notes == [
            "help: a node cannot need itself, directly or through other nodes; remove one of these needs",
        ])
        #expect(result.graph == nil)
    }

    @Test func reportsEachCycle() {
        let result = decode(doc([
            "ok": ["run": "x"],
            "p": ["run": "x", "needs": ["q", "ok"]],
            "q": ["run": "x", "needs": "p"],
            "r": ["run": "x", "needs": ["s"]],
            "s": ["run": "x", "needs": ["r"]],
        ]))
        #expect(lines(result) == [
            "5:3: error: dependency cycle: p -> q -> p",
            "11:3: error: dependency cycle: r -> s -> r",
        ])
    }

    @Test func findsTheShortestCycleThroughTheFirstNode() {
        // 0 -> 1 -> 2 -> 0 and 0 -> 2 -> 0: one component, reported once, by its shortest path.
        #expect(CycleFinder.cycles(successors: [[1, 2], [2], [0]]) == [[0, 2]])
        #expect(CycleFinder.cycles(successors: [[0], []]) == [], "self-edges are reported by the decoder, not here")
        #expect(CycleFinder.cycles(successors: [[], [0], [1]]) == [])
    }

    @Test func aLongChainIsFineAndDoesNotOverflowTheStack() throws {
        let n = 100_000
        let successors = (0..<n).map { $0 == 0 ? [] : [$0 - 1] }
        #expect(CycleFinder.cycles(successors: successors) == [])
        let cyclic = (0..<n).map { [($0 + 1) % n] }
        let cycles = CycleFinder.cycles(successors: cyclic)
        #expect(cycles.count == 1)
        #expect(cycles.first?.count == n)
        #expect(cycles.first?.prefix(3) == [0, 1, 2])
    }

    @Test func longCyclesAreShortenedInMessages() {
        let names = (0..<30).map { "n\($0)" }
        #expect(GraphAnalyzer.cyclePath(names)
            == "n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> n8 -> n9 -> … (12 more) -> n22 -> n23 -> n24 -> n25 -> n26 -> n27 -> n28 -> n29 -> n0")
    }

    @Test func aLongCycleInAFileIsReported() {
        let n = 2000
        let nodes: Y = .map((0..<n).map { i in ("n\(i)", ["run": "x", "needs": .plain("n\((i + 1) % n)")]) })
        let result = decode(doc(nodes))
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.message.hasPrefix("dependency cycle: n0 -> n1 -> ") == true)
        #expect(result.diagnostics.first?.message.hasSuffix("-> n1999 -> n0") == true)
    }
}
