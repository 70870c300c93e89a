import MoonDocument
import Testing
@testable import MoonGraph

@Suite struct PlanTests {
    /// ```
    /// fetch ─┐
    /// compile ─ link ─ package ─ notify
    /// lint (alone)
    /// ```
    static let sample: Graph = graph(doc([
        "lint": ["run": "lint"],
        "fetch": ["run": "fetch"],
        "compile": ["run": "cc"],
        "link": ["run": "ld", "needs": ["compile"]],
        "package": ["run": "pkg", "needs": ["fetch", "link"]],
        "notify": ["run": "notify", "needs": "package"],
    ]))!

    func names(_ plan: Plan, _ indices: [Int]) -> [String] { indices.map { plan.graph.nodes[$0].name } }

    @Test func allNodesWhenNoTargets() throws {
        let plan = try Plan.make(graph: Self.sample)
        #expect(names(plan, plan.selected) == ["lint", "fetch", "compile", "link", "package", "notify"])
        #expect(plan.levels.map { names(plan, $0) } == [["lint", "fetch", "compile"], ["link"], ["package"], ["notify"]])
        #expect(plan.priority == [1, 3, 4, 3, 2, 1])
        #expect(names(plan, plan.startOrder) == ["compile", "fetch", "lint", "link", "package", "notify"])
        #expect(names(plan, plan.criticalPath) == ["compile", "link", "package", "notify"])
    }

    @Test func targetsSelectTheirTransitiveNeeds() throws {
        let plan = try Plan.make(graph: Self.sample, targets: ["package"])
        #expect(names(plan, plan.selected) == ["fetch", "compile", "link", "package"])
        #expect(plan.levels.map { names(plan, $0) } == [["fetch", "compile"], ["link"], ["package"]])
        #expect(plan.level == [-1, 0, 0, 1, 2, -1])
        #expect(plan.priority == [0, 2, 3, 2, 1, 0], "priorities count only selected work")
        #expect(!plan.isSelected(0) && plan.isSelected(1))
        let two = try Plan.make(graph: Self.sample, targets: ["link", "lint", "link"])
        #expect(names(two, two.selected) == ["lint", "compile", "link"])
    }

    @Test func unknownTargetsAreErrorsWithSuggestions() {
        #expect {
            try Plan.make(graph: Self.sample, targets: ["pakage", "zzz"])
        } throws: { error in
            let items = (error as? Diagnostics)?.items ?? []
            return items.map(line) == ["error: unknown node 'pakage' (did you mean 'package'?)", "error: unknown node 'zzz'"]
                && items.allSatisfy { $0.span == nil }
        }
    }

    @Test func weightsChangePriorities() throws {
        // fetch takes 10 (say, seconds recorded last run): it now goes first.
        let plan = try Plan.make(graph: Self.sample, weights: [1, 10, 1, 1, 1, 1])
        #expect(plan.priority == [1, 12, 4, 3, 2, 1])
        #expect(names(plan, plan.startOrder).prefix(3) == ["fetch", "compile", "lint"])
    }

    @Test func tiesGoToFileOrder() throws {
        let g = try #require(graph(doc(["c": ["run": "x"], "a": ["run": "x"], "b": ["run": "x"]])))
        let plan = try Plan.make(graph: g)
        #expect(plan.startOrder == [0, 1, 2])
        #expect(plan.levels == [[0, 1, 2]])
    }

    @Test func aHundredThousandNodeChainPlansWithoutRecursion() throws {
        let n = 100_000
        let span = SourceSpan.wholeFile("chain.yaml")
        let nodes = (0..<n).map { i in
            Node(name: "n\(i)", nameSpan: span, needs: i == 0 ? [] : [i - 1], action: .shell("true"))
        }
        let g = Graph(name: "chain", path: "chain.yaml", nodes: nodes)
        let plan = try Plan.make(graph: g, targets: ["n\(n - 1)"])
        #expect(plan.selected.count == n)
        #expect(plan.levels.count == n)
        #expect(plan.priority[0] == n)
        #expect(plan.startOrder.first == 0 && plan.startOrder.last == n - 1)
        #expect(plan.criticalPath.count == n)
    }
}
