import MoonDocument
import Testing
@testable import MoonGraph

/// Decoding, validating and planning stay linear: a 10,000-node graph is quick,
/// and a 100,000-node chain goes through every stage without recursion.
@Suite struct PerformanceTests {
    /// 10,000 nodes in 100 layers of 100; each node needs 3 nodes of the layer before.
    static func layered(_ count: Int) -> YAMLNode {
        let width = 100
        let nodes: [(String, Y)] = (0..<count).map { i in
            var body: [(String, Y)] = [("run", .plain("echo \(i)")), ("timeout", "1m")]
            if i >= width {
                let layer = i / width - 1
                body.append(("needs", .seq((0..<3).map { .plain("n\(layer * width + (i * 7 + $0 * 31) % width)") })))
            }
            return ("n\(i)", .map(body))
        }
        return YAMLLayout.render(doc(.map(nodes))).root
    }

    static func chain(_ count: Int) -> YAMLNode {
        let nodes: [(String, Y)] = (0..<count).map { i in
            ("n\(i)", i == 0 ? ["run": "true"] : .map([("run", "true"), ("needs", .plain("n\(i - 1)"))]))
        }
        return YAMLLayout.render(doc(.map(nodes))).root
    }

    @Test func tenThousandNodes() throws {
        let root = Self.layered(10_000)
        let clock = ContinuousClock()
        var plan: Plan?
        let elapsed = try clock.measure {
            let result = GraphLoader.decode(root, path: "big.yaml")
            plan = try Plan.make(graph: try #require(result.graph))
        }
        #expect(plan?.levels.count == 100)
        // Debug builds are slower; release takes a few milliseconds (see the report).
        #expect(elapsed < .seconds(10), "decode + plan of 10,000 nodes took \(elapsed)")
        print("decode + validate + plan, 10,000 nodes: \(elapsed)")
    }

    @Test func hundredThousandNodeChainThroughEveryStage() throws {
        let root = Self.chain(100_000)
        let result = GraphLoader.decode(root, path: "chain.yaml")
        let g = try #require(result.graph)
        let plan = try Plan.make(graph: g, targets: ["n99999"])
        #expect(plan.levels.count == 100_000)
        #expect(plan.priority[0] == 100_000)
        #expect(GraphRenderer.dryRun(plan).hasSuffix("n99999  level 99999  default  true\n"))
        #expect(GraphRenderer.json(plan).count > 0)
    }

    @Test func aHundredThousandNodeCycleIsOneShortMessage() {
        let nodes: [(String, Y)] = (0..<100_000).map { i in
            ("n\(i)", .map([("run", "true"), ("needs", .plain("n\((i + 1) % 100_000)"))]))
        }
        let result = GraphLoader.decode(YAMLLayout.render(doc(.map(nodes))).root, path: "cycle.yaml")
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.message.contains("(99982 more)") == true)
    }

    @Test func manyUnknownNeedsStayFast() {
        // A hostile file: every need is unknown. Suggestions are capped, so this is not quadratic.
        let nodes: [(String, Y)] = (0..<5_000).map { i in ("n\(i)", .map([("run", "true"), ("needs", .plain("m\(i)"))])) }
        let clock = ContinuousClock()
        var count = 0
        let elapsed = clock.measure {
            count = GraphLoader.decode(YAMLLayout.render(doc(.map(nodes))).root, path: "bad.yaml").diagnostics.count
        }
        #expect(count == 5_000)
        #expect(elapsed < .seconds(15))
    }
}
