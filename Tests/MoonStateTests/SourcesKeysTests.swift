import Foundation
import MoonDocument
import MoonGraph
import Testing

/// `sources:` and `generates:` as the graph decoder reads them.
@Suite struct SourcesKeysTests {
    func load(_ yaml: String) -> GraphLoadResult {
        GraphLoader.load(SourceFile(path: "moon.yaml", bytes: Array(yaml.utf8)))
    }

    @Test func aGlobOrAListOfGlobs() throws {
        let result = load("""
            version: 1
            nodes:
              a: { run: x, sources: "src/**", generates: [out/a, "out/*.o"] }
              b: { run: x, sources: [a.txt, "!b.txt"] }
            """)
        let graph = try #require(result.graph)
        #expect(graph.nodes[0].sources == ["src/**"])
        #expect(graph.nodes[0].generates == ["out/a", "out/*.o"])
        #expect(graph.nodes[1].sources == ["a.txt", "!b.txt"])
        #expect(result.diagnostics.isEmpty)
    }

    @Test func mistakesAreReportedWithTheirPlace() {
        let result = load("""
            version: 1
            nodes:
              a: { run: x, sources: { x: 1 } }
              b: { run: x, sources: [""] }
              c: { run: x, sources: ["${{ vars.x }}"] }
              d: { run: x, generates: [out] }
            """)
        let messages = result.diagnostics.map { "\($0.span?.start.line ?? 0): \($0.message)" }
        #expect(messages.contains { $0.hasPrefix("3: expected a glob or a list of globs for 'sources'") })
        #expect(messages.contains { $0.hasPrefix("4: an empty glob in 'sources'") })
        #expect(messages.contains { $0.hasPrefix("5: undeclared var 'x'") })
        #expect(messages.contains { $0.hasPrefix("6: 'generates' only matters with 'sources'") })
    }
}
