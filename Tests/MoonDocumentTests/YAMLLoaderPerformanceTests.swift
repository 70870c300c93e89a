import Testing
import MoonDocument

/// A 10,000-node graph file (about 50,000 lines) loads in linear time. The
/// bound is loose because tests run as a debug build on a shared machine;
/// the time is printed.
@Suite struct YAMLLoaderPerformanceTests {
    static func graph(nodes: Int) -> String {
        var text = "version: 1\nname: big\nnodes:\n"
        text.reserveCapacity(nodes * 140)
        for i in 0..<nodes {
            text += "  node\(i):\n"
            text += "    description: Build part \(i) of the système\n"
            text += "    run: make -C part\(i) all\n"
            text += "    needs: [node\(max(i - 1, 0)), node\(i / 2)]\n"
            text += "    env: { PART: \"\(i)\", LEVEL: \(i % 7) }\n"
        }
        return text
    }

    @Test func tenThousandNodeGraphLoadsQuickly() throws {
        let source = SourceFile(path: "big.yaml", text: Self.graph(nodes: 10_000))
        #expect(source.lineCount >= 50_000)
        let clock = ContinuousClock()
        var root: YAMLNode?
        var best = Duration.seconds(1000)
        for _ in 0..<3 {
            root = nil  // so freeing the previous tree is not timed
            let elapsed = try clock.measure { root = try YAMLLoader.load(source) }
            best = min(best, elapsed)
        }
        let nodes = try #require(root?["nodes"]?.pairs)
        #expect(nodes.count == 10_000)
        #expect(nodes.last?.value["run"]?.span.start.line == source.lineCount - 3)
        print("loaded \(source.bytes.count) bytes, \(source.lineCount) lines, \(root?.nodeCount ?? 0) YAML nodes in \(best)")
        #expect(best < .seconds(10))
    }

    @Test func manyErrorsRenderQuickly() throws {
        // Every key duplicated: 10,000 diagnostics rendered against a 50,000-line file.
        var text = "nodes:\n"
        for i in 0..<10_000 { text += "  n\(i): a\n  n\(i): b\n" }
        let source = SourceFile(path: "dup.yaml", text: text)
        var items: [Diagnostic] = []
        do { _ = try YAMLLoader.load(source) } catch { items = error.items }
        #expect(items.count == 10_000)
        let clock = ContinuousClock()
        var rendered = ""
        let elapsed = clock.measure { rendered = DiagnosticRenderer().render(items, source: source) }
        #expect(rendered.hasSuffix("= note: first defined at line 20000, column 3\n      = help: keys of one mapping must differ (YAML readers disagree on which one wins): remove or rename one\n"))
        #expect(elapsed < .seconds(15))
    }
}
