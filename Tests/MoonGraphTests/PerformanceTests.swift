import MoonDocument
import Testing
@testable import MoonGraph

/// Decoding, validating and planning stay linear: a 10,000-node graph is quick,
/// and a long chain goes through every stage without recursion.
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

    @Test func tenThousandNodes() async throws {
        let (levels, elapsed) = try await onOwnThread(stackSize: 8 << 20) {
            let root = Self.layered(10_000)
            var levels = 0
            let elapsed = try ContinuousClock().measure {
                let result = GraphLoader.decode(root, path: "big.yaml")
                guard let graph = result.graph else { return }
                levels = try Plan.make(graph: graph).levels.count
            }
            return (levels, elapsed)
        }
        #expect(levels == 100)
        // A loose bound: tests run as a debug build on a shared machine.
        #expect(elapsed < .seconds(10), "decode + plan of 10,000 nodes took \(elapsed)")
        print("decode + validate + plan, 10,000 nodes: \(elapsed)")
    }

    /// 20,000 nodes on a 512 KiB stack: a stage that recursed along the chain
    /// would overflow it (a release build's moon has the main thread's 8 MiB,
    /// but its frames are smaller too).
    @Test func aLongChainGoesThroughEveryStageWithoutRecursion() async throws {
        struct Seen: Sendable { var levels = 0, firstPriority = 0 }
        let seen = try await onOwnThread {
            let result = GraphLoader.decode(Self.chain(20_000), path: "chain.yaml")
            guard let graph = result.graph else { return Seen() }
            let plan = try Plan.make(graph: graph, targets: ["n19999"])
            return Seen(levels: plan.levels.count, firstPriority: plan.priority[0])
        }
        #expect(seen.levels == 20_000)
        #expect(seen.firstPriority == 20_000)
    }

    @Test func aLongCycleIsOneShortMessage() async throws {
        let messages = try await onOwnThread {
            let nodes: [(String, Y)] = (0..<20_000).map { i in
                ("n\(i)", .map([("run", "true"), ("needs", .plain("n\((i + 1) % 20_000)"))]))
            }
            return GraphLoader.decode(YAMLLayout.render(doc(.map(nodes))).root, path: "cycle.yaml").diagnostics.map(\.message)
        }
        #expect(messages.count == 1)
        #expect(messages.first?.contains("(19982 more)") == true)
    }

    @Test func manyUnknownNeedsStayFast() async throws {
        // A hostile file: every need is unknown. Suggestions are capped, so this is not quadratic.
        let (count, elapsed) = try await onOwnThread(stackSize: 8 << 20) {
            let nodes: [(String, Y)] = (0..<5_000).map { i in ("n\(i)", .map([("run", "true"), ("needs", .plain("m\(i)"))])) }
            var count = 0
            let elapsed = ContinuousClock().measure {
                count = GraphLoader.decode(YAMLLayout.render(doc(.map(nodes))).root, path: "bad.yaml").diagnostics.count
            }
            return (count, elapsed)
        }
        #expect(count == 5_000)
        #expect(elapsed < .seconds(15))
    }
}
