import MoonDocument
import Testing
@testable import MoonGraph

/// Which vars a node reads (`VarReads`), the part of its fingerprint a
/// `--set` can change; and the fix moon gives for Snakemake's `{item}`.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct VarReadsTests {
    @Test func aNodeReadsTheVarsOfItsCommandEnvDirAndTheGraphsEnv() throws {
        let graph = try #require(load("""
            version: 1
            vars: { A: a, B: "${{ vars.A }}b", C: c, D: d, E: e, F: f, G: g }
            env: { FROM_GRAPH: "${{ vars.E }}" }
            nodes:
              shell: { run: "echo ${{ vars.B }} ${{ vars.A }}" }
              exec: { run: [echo, "${{ vars.C }}"], dir: "${{ vars.D }}" }
              env: { run: "echo $X", env: { X: "${{ vars.F }}" } }
              shadow: { run: echo, env: { FROM_GRAPH: own } }
              paths: { run: echo, sources: ["${{ vars.G }}"] }
              group: { needs: [shell] }
            """).graph)
        let reads = VarReads(graph: graph)
        func names(_ node: String) -> [String] { reads.names(readBy: graph.nodes.first { $0.name == node }!) }
        #expect(names("shell") == ["A", "B", "E"])
        #expect(names("exec") == ["C", "D", "E"])
        #expect(names("env") == ["E", "F"])
        #expect(names("shadow") == [])
        // Vars in sources are put in at load: the pattern's text holds G's value.
        #expect(names("paths") == ["E"])
        #expect(names("group") == [])
    }

    @Test func snakemakePlaceholdersAreRewritten() {
        #expect(OutputCollisions.fixedPlaceholders("out/text/{item.stem}.txt") == "out/text/${{ item.stem }}.txt")
        #expect(OutputCollisions.fixedPlaceholders("{item}") == "${{ item }}")
        #expect(OutputCollisions.fixedPlaceholders("out/${{ item }}.txt") == nil)
        #expect(OutputCollisions.fixedPlaceholders("a{b}c") == nil)
        #expect(OutputCollisions.key("./out//x.txt") == "out/x.txt")
        #expect(OutputCollisions.key("a/../b") == "b")
    }
}
