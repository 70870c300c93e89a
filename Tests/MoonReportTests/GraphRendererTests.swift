import Foundation
import MoonDocument
import MoonGraph
import MoonJSON
@testable import MoonReport
import Testing

@Suite struct GraphRendererTests {
    /// The one JSON string escaper (graph exports and the event stream):
    /// text with nothing to escape is taken whole, the rest scalar by scalar.
    @Test func jsonStringsEscapeWhatJSONAndJavaScriptLineReadersNeed() {
        func quoted(_ s: String) -> String {
            var out = ""
            JSONString.quote(s, into: &out)
            return out
        }
        #expect(quoted("build.release-1") == #""build.release-1""#)
        #expect(quoted("") == #""""#)
        #expect(quoted("café") == #""café""#)
        #expect(quoted("5 €") == #""5 €""#)
        #expect(quoted(#"say "hi" \ now"#) == #""say \"hi\" \\ now""#)
        #expect(quoted("a\tb\nc\r\u{08}\u{0C}") == #""a\tb\nc\r\b\f""#)
        #expect(quoted("\u{01}\u{1F}\u{7F}") == #""\u0001\u001f\u007f""#)
        #expect(quoted("x\u{2028}y\u{2029}") == #""x\u2028y\u2029""#)
    }

    /// Whatever the text, the literal reads back as it (`JSONParser`) and
    /// holds no raw control, DEL, C1 control, U+2028 or U+2029; into a
    /// String or into bytes, the same literal.
    @Test func jsonStringsReadBackAndHoldNothingRaw() throws {
        var samples = ["plain", "", "a\tb\nc\r\u{08}\u{0C}", #"say "hi" \ now"#, "\u{01}\u{1F}\u{7F}\u{80}\u{9F}\u{A0}\u{C2}",
                       "x\u{2028}y\u{2029}\u{2027}\u{202A}\u{20AC}", "n\u{e9}ud \u{1F319}\t", "\u{85}end", "\u{2029}"]
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Unicode.Scalar] = ["a", "\t", "\n", "\"", "\\", "/", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{2028}", "\u{2029}",
                                          "\u{2030}", "\u{E000}", "\u{1F319}", "\u{0}"]
        for _ in 0..<300 {
            var s = ""
            for _ in 0..<Int.random(in: 0..<12, using: &generator) { s.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            samples.append(s)
        }
        for s in samples {
            var text = ""
            JSONString.quote(s, into: &text)
            var bytes: [UInt8] = []
            JSONString.quote(s, into: &bytes)
            let shown = s.unicodeScalars.map { String($0.value, radix: 16) }
            #expect(bytes == Array(text.utf8), "\(shown)")
            #expect(try JSONParser.parse(text) == .string(s), "\(shown)")
            let raw = text.unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
            #expect(raw.isEmpty, "\(shown)")
        }
    }

    static let sample: Graph = load("""
        version: 1
        name: demo
        queues:
          net: {concurrency: 4}
          hpc: {executor: slurm, slurm: {partition: debug, mem: 4G}}
        nodes:
          fetch: {run: 'curl -o "data.json" $URL', queue: net, description: Download, timeout: 30s}
          compile: {run: [swift, build, -c, release], queue: hpc, retry: {times: 2, delay: 1s}}
          wait: {uses: sleep, with: {duration: 2s}}
          package: {needs: [fetch, compile, wait], run: ./package.sh, env: {A: "1"}}
        """)!

    /// The graph of a valid graph file's text.
    static func load(_ text: String) -> Graph? {
        GraphLoader.load(SourceFile(path: "graph.yaml", text: text)).graph
    }

    @Test func text() {
        #expect(GraphRenderer.render(Self.sample, format: .text) == """
        graph demo: 4 nodes in 2 levels
        level 0
          fetch    [net]      curl -o "data.json" $URL
          compile  [hpc]      swift build -c release  [slurm partition=debug mem=4G]
          wait     [default]  uses sleep (duration: 2s)
        level 1
          package  [default]  ./package.sh

        """)
    }

    @Test func dot() {
        #expect(GraphRenderer.render(Self.sample, format: .dot) == #"""
        digraph "demo" {
          node [shape=box];
          "fetch" [tooltip="curl -o \"data.json\" $URL"];
          "compile" [tooltip="swift build -c release"];
          "wait" [tooltip="uses sleep (duration: 2s)"];
          "package" [tooltip="./package.sh"];
          "fetch" -> "package";
          "compile" -> "package";
          "wait" -> "package";
        }

        """#)
        #expect(GraphRenderer.dotQuote(#"a"b\c"#) == #""a\"b\\c""#)
    }

    @Test func mermaid() throws {
        #expect(GraphRenderer.render(Self.sample, format: .mermaid) == """
        flowchart TD
          n_fetch["fetch"]
          n_compile["compile"]
          n_wait["wait"]
          n_package["package"]
          n_fetch --> n_package
          n_compile --> n_package
          n_wait --> n_package

        """)
        let g = try #require(Self.load("""
            version: 1
            nodes:
              end: {run: x}
              a.b: {run: x}
              a-b: {run: x, needs: [a.b, end]}
            """))
        #expect(GraphRenderer.render(g, format: .mermaid) == """
        flowchart TD
          n_end["end"]
          n_a_b["a.b"]
          n_a_b_2["a-b"]
          n_a_b --> n_a_b_2
          n_end --> n_a_b_2

        """)
    }

    @Test func json() {
        #expect(GraphRenderer.render(Self.sample, format: .json) == """
        {
          "name": "demo",
          "description": null,
          "queues": [
            {
              "name": "default",
              "concurrency": "auto",
              "executor": "local"
            },
            {
              "name": "net",
              "concurrency": 4,
              "executor": "local"
            },
            {
              "name": "hpc",
              "concurrency": "auto",
              "executor": "slurm",
              "slurm": {
                "partition": "debug",
                "mem": "4G"
              }
            }
          ],
          "nodes": [
            {
              "name": "fetch",
              "description": "Download",
              "needs": [],
              "queue": "net",
              "kind": "shell",
              "command": "curl -o \\"data.json\\" $URL",
              "preview": "curl -o \\"data.json\\" $URL",
              "shell": "sh",
              "if": "success",
              "continue_on_error": false,
              "timeout_ms": 30000,
              "retry": {
                "times": 0,
                "delay_ms": 0,
                "backoff": 1,
                "max_delay_ms": null
              },
              "dir": null,
              "env": {},
              "level": 0,
              "priority": 2
            },
            {
              "name": "compile",
              "description": null,
              "needs": [],
              "queue": "hpc",
              "kind": "exec",
              "command": ["swift", "build", "-c", "release"],
              "preview": "swift build -c release",
              "if": "success",
              "continue_on_error": false,
              "timeout_ms": null,
              "retry": {
                "times": 2,
                "delay_ms": 1000,
                "backoff": 1,
                "max_delay_ms": null
              },
              "dir": null,
              "env": {},
              "slurm": {
                "partition": "debug",
                "mem": "4G"
              },
              "level": 0,
              "priority": 2
            },
            {
              "name": "wait",
              "description": null,
              "needs": [],
              "queue": "default",
              "kind": "builtin",
              "command": "sleep",
              "with": {
                "duration": "2s"
              },
              "preview": "uses sleep (duration: 2s)",
              "if": "success",
              "continue_on_error": false,
              "timeout_ms": null,
              "retry": {
                "times": 0,
                "delay_ms": 0,
                "backoff": 1,
                "max_delay_ms": null
              },
              "dir": null,
              "env": {},
              "level": 0,
              "priority": 2
            },
            {
              "name": "package",
              "description": null,
              "needs": ["fetch", "compile", "wait"],
              "queue": "default",
              "kind": "shell",
              "command": "./package.sh",
              "preview": "./package.sh",
              "shell": "sh",
              "if": "success",
              "continue_on_error": false,
              "timeout_ms": null,
              "retry": {
                "times": 0,
                "delay_ms": 0,
                "backoff": 1,
                "max_delay_ms": null
              },
              "dir": null,
              "env": {
                "A": "1"
              },
              "level": 1,
              "priority": 1
            }
          ],
          "edges": [
            ["fetch", "package"],
            ["compile", "package"],
            ["wait", "package"]
          ],
          "levels": [
            ["fetch", "compile", "wait"],
            ["package"]
          ]
        }

        """)
    }

    @Test func dryRunListsNodesInStartOrder() throws {
        let plan = try Plan.make(graph: Self.sample, weights: [1, 1, 5, 1])
        #expect(GraphRenderer.dryRun(plan) == """
        dry run: graph demo, 4 nodes in 2 levels
          1. wait     level 0  default  uses sleep (duration: 2s)
          2. fetch    level 0  net      curl -o "data.json" $URL
          3. compile  level 0  hpc      swift build -c release  [slurm partition=debug mem=4G]
          4. package  level 1  default  ./package.sh

        """)
        let partial = try Plan.make(graph: Self.sample, targets: ["fetch"])
        #expect(GraphRenderer.dryRun(partial) == """
        dry run: graph demo, 1 node in 1 level (of 4)
          1. fetch  level 0  net  curl -o "data.json" $URL

        """)
    }

    @Test func jsonEscapesControlCharacters() {
        #expect(JSONValue.string("a\"b\\c\n\u{01}é").pretty() == #""a\"b\\c\n\u0001é""#)
    }

    /// 20,000 nodes in a chain on a 512 KiB stack: a renderer that recursed
    /// along the chain would overflow it.
    @Test func aLongChainRendersWithoutRecursion() async throws {
        let span = SourceSpan(file: "chain.yaml", start: SourceLocation(line: 1, column: 1, offset: 0),
                              end: SourceLocation(line: 1, column: 1, offset: 0))
        let nodes = (0..<20_000).map { i in
            Node(name: "n\(i)", nameSpan: span, needs: i == 0 ? [] : [i - 1], action: .shell("true"))
        }
        let plan = try Plan.make(graph: Graph(name: "chain", path: "chain.yaml", nodes: nodes), targets: ["n19999"])
        let (dryRunEnd, jsonBytes) = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: (String(GraphRenderer.dryRun(plan).suffix(40)), GraphRenderer.json(plan).utf8.count))
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        #expect(dryRunEnd.hasSuffix("n19999  level 19999  default  true\n"))
        #expect(jsonBytes > 0)
    }
}

/// A `for-each` over a need's output is known only during the run: the
/// listings say when it expands instead of showing its command.
@Suite struct DynamicFanOutRendererTests {
    static var graph: Graph {
        var graph = GraphRendererTests.sample
        graph.nodes[3].fanOut = DynamicFanOut(need: 0, key: "files")
        return graph
    }

    @Test func theDryRunSaysWhenTheTemplateExpands() throws {
        let plan = try Plan.make(graph: Self.graph)
        let text = GraphRenderer.dryRun(plan)
        #expect(text.contains("package  level 1  default  expands when fetch completes\n"), "\(text)")
    }

    @Test func theGraphSaysWhenTheTemplateExpands() throws {
        let plan = try Plan.make(graph: Self.graph)
        #expect(GraphRenderer.text(plan).contains("expands when fetch completes\n"))
        #expect(GraphRenderer.dot(plan).contains(#""package" [tooltip="expands when fetch completes"]"#))
        let json = GraphRenderer.json(plan)
        #expect(json.contains(#""for_each": {"#) && json.contains(#""need": "fetch""#) && json.contains(#""output": "files""#), "\(json)")
    }
}
