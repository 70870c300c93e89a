import Foundation
import MoonGraph
import MoonProcess
import Testing
@testable import MoonRun

/// The layers of a node's environment (NodeEnvironment's doc comment,
/// docs/dataflow.md): dotenv, moon's environment, the file's `env:`, the
/// node's `env:`, then MOON_*; later layers win, and `${{ env.X }}` reads
/// the layers below the mapping it is in.
@Suite struct NodeEnvironmentTests {
    private func environment(_ yaml: String, dotenv: [String: String] = [:], base: [String: String]) throws -> (Graph, NodeEnvironment) {
        var graph = try slurmTestGraph(yaml)
        for (name, value) in dotenv.sorted(by: { $0.key < $1.key }) { graph.dotenvValues[name] = value }
        return (graph, NodeEnvironment(graph: graph, base: base))
    }

    private func node(_ name: String, in graph: Graph) throws -> Node {
        try #require(graph.nodes.first { $0.name == name })
    }

    @Test func laterLayersWin() throws {
        let (graph, environment) = try environment("""
            version: 1
            env: { FILE: file, BOTH: file, NODE_OVER_FILE: file }
            nodes:
              a:
                run: "true"
                env: { NODE_OVER_FILE: node, MOON_NODE: mine, OWN: "${{ env.FILE }}+${{ env.DOT }}" }
            """, dotenv: ["DOT": "dot", "BOTH": "dot", "SHELL_OVER_DOT": "dot"],
            base: ["PATH": "/usr/bin:/bin", "SHELL_OVER_DOT": "shell", "BOTH": "shell", "MOON_ATTEMPT": "outer"])
        let spec = try #require(try environment.processSpec(for: try node("a", in: graph), attempt: 3, outputFile: "/tmp/out.3"))
        #expect(spec.environment == [
            "PATH": "/usr/bin:/bin",
            "DOT": "dot",
            "SHELL_OVER_DOT": "shell",       // moon's environment over dotenv
            "BOTH": "file",                  // the file's env over both
            "FILE": "file",
            "NODE_OVER_FILE": "node",        // the node's env over the file's
            "OWN": "file+dot",               // a node's env reads the layers below it
            "MOON_NODE": "a",                // MOON_* over everything
            "MOON_ATTEMPT": "3",
            "MOON_GRAPH_DIR": "/work/proj",
            "MOON_OUTPUT": "/tmp/out.3",
        ])
        #expect(spec.processEnvironment["NODE_OVER_FILE"] == "node")
        #expect(spec.executable == "/bin/sh" || spec.executable == "/usr/bin/sh")
    }

    @Test func runAndDirSeeTheNodesWholeEnvironment() throws {
        let (graph, environment) = try environment("""
            version: 1
            env: { WHERE: sub }
            nodes:
              a:
                run: echo ${{ env.MOON_NODE }} ${{ env.OWN }} ${{ env.HOME }}
                env: { OWN: mine }
                dir: ${{ env.WHERE }}
              b:
                run: [printf, "%s", "${{ env.MOON_ATTEMPT }}"]
            """, base: ["PATH": "/usr/bin:/bin", "HOME": "/home/u"])
        let a = try #require(try environment.processSpec(for: try node("a", in: graph), attempt: 1))
        // The values reach the shell in its environment, never in the script.
        #expect(a.arguments == ["-e", "-c", "echo \"${MOON_EXPR_1}\" \"${MOON_EXPR_2}\" \"${MOON_EXPR_3}\""])
        #expect(a.processEnvironment["MOON_EXPR_1"] == "a")
        #expect(a.processEnvironment["MOON_EXPR_2"] == "mine")
        #expect(a.processEnvironment["MOON_EXPR_3"] == "/home/u")
        #expect(a.workingDirectory == "/work/proj/sub")
        let b = try #require(try environment.processSpec(for: try node("b", in: graph), attempt: 2))
        #expect(b.arguments == ["%s", "2"])
    }

    @Test func aNodesEnvDoesNotSeeItsOwnEntries() throws {
        let (graph, environment) = try environment("""
            version: 1
            nodes:
              a:
                run: "true"
                env: { A: one, B: "${{ env.A }}" }
            """, base: ["PATH": "/usr/bin:/bin"])
        #expect(throws: Interpolator.Failure.self) {
            _ = try environment.processSpec(for: try node("a", in: graph), attempt: 1)
        }
    }

    @Test func aNodeWithoutExpressionsRunsItsTextAsWritten() throws {
        let (graph, environment) = try environment("""
            version: 1
            nodes:
              a: { run: "echo $HOME", dir: plain }
            """, base: ["PATH": "/usr/bin:/bin", "HOME": "/home/u"])
        let spec = try #require(try environment.processSpec(for: try node("a", in: graph), attempt: 1))
        #expect(spec.arguments == ["-e", "-c", "echo $HOME"])
        #expect(spec.workingDirectory == "/work/proj/plain")
        #expect(spec.environment["HOME"] == "/home/u")
    }

    @Test func programCacheAnswersPerNameAndPath() throws {
        let cache = ProgramCache()
        #expect(cache.lookup("sh", path: "/usr/bin:/bin") != nil)
        #expect(cache.lookup("sh", path: "/usr/bin:/bin") == cache.lookup("sh", path: "/usr/bin:/bin"))
        #expect(cache.lookup("sh", path: "/nonexistent") == nil)
        #expect(cache.lookup("no-such-program-moon", path: "/usr/bin:/bin") == nil)
        #expect(cache.lookup("bin/sh", path: "/") == nil)
        #expect(cache.lookup("sh", path: nil) == nil)
    }
}
