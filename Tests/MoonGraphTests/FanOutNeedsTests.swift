import Foundation
import MoonDocument
import Testing
@testable import MoonGraph

/// What the loader makes of a fan-out's needs on another fan-out: one
/// barrier per template needed whole (N + M edges), per-item needs made
/// from each instance's values.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct FanOutNeedsTests {
    func graph(_ text: String) throws -> Graph {
        let result = load(text)
        return try #require(result.graph, "\(result.diagnostics.map(\.message))")
    }

    func names(_ graph: Graph, _ indices: [Int]) -> [String] { indices.map { graph.nodes[$0].name } }

    @Test func aFanOutNeedingAWholeFanOutNeedsOneBarrier() throws {
        let g = try graph("""
            version: 1
            nodes:
              a: { for-each: [x, y, z], run: "true" }
              b: { for-each: [x, y, z], needs: [a], run: "true" }
              sum: { needs: [a], run: "true" }
            """)
        let barrier = try #require(g.nodes.firstIndex(where: { $0.isBarrier }))
        #expect(g.nodes[barrier].name == "a" && g.nodes[barrier].isInternal)
        #expect(names(g, g.nodes[barrier].needs) == ["a[x]", "a[y]", "a[z]"])
        for label in ["x", "y", "z"] { #expect(g["b[\(label)]"]?.needs == [barrier]) }
        // One node needing a template needs its instances, as written.
        #expect(names(g, g["sum"]!.needs) == ["a[x]", "a[y]", "a[z]"])
        // `a` still names the instances; a barrier adds no level and no weight.
        #expect(names(g, try g.targets(for: "a")) == ["a[x]", "a[y]", "a[z]"])
        let plan = try Plan.make(graph: g)
        #expect(plan.levels.count == 2)
        #expect(plan.priority[g.index(of: "a[x]")!] == 2)
        // The start order stays topological: the barrier before what needs it, in the same level.
        let position = { (v: Int) in plan.startOrder.firstIndex(of: v)! }
        for label in ["x", "y", "z"] { #expect(position(barrier) < position(g.index(of: "b[\(label)]")!)) }
        let edges = g.nodes.reduce(0) { $0 + $1.needs.count }
        #expect(edges == 3 + 3 + 3)
    }

    @Test func perItemNeedsPairEachInstanceWithItsOwn() throws {
        let g = try graph("""
            version: 1
            vars: { STAGE: text, SETUP: setup }
            nodes:
              text: { for-each: [a, b], run: "true" }
              count: { for-each: [a, b], needs: ["${{ vars.STAGE }}[${{ item }}]"], run: "true" }
              both: { needs: ["${{ vars.STAGE }}"], run: "true" }
              setup: { run: "true" }
              use: { needs: ["${{ vars.SETUP }}"], run: "echo ${{ needs.setup.result }}" }
            """)
        #expect(names(g, g["count[a]"]!.needs) == ["text[a]"])
        #expect(names(g, g["count[b]"]!.needs) == ["text[b]"])
        #expect(names(g, g["both"]!.needs) == ["text[a]", "text[b]"])
        #expect(!g.nodes.contains(where: { $0.isBarrier }))
        #expect(names(g, g["use"]!.needs) == ["setup"])
    }

    @Test func aMadeNeedOnItselfIsAnError() throws {
        let result = load("""
            version: 1
            nodes:
              t: { for-each: [a, b], needs: ["t[${{ item }}]"], run: "true" }
            """)
        #expect(result.graph == nil)
        #expect(result.diagnostics.contains { $0.message == "node 't[a]' needs itself ('t[${{ item }}]' is 't[a]')" },
                "\(result.diagnostics.map(\.message))")
    }
}
