import Foundation
import Testing

/// `moon check`, `list`, `graph`, `schema` and the dry run, end to end.
@Suite struct CheckTests {
    @Test func aValidFileIsOK() throws {
        let moon = try Moon()
        let result = try moon.run(["check", Moon.root.appendingPathComponent("examples/quickstart.yaml").path])
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("quickstart.yaml: ok (7 nodes)\n"))
    }

    @Test func everyErrorIsReportedCompilerStyle() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              build:
                run: make
              deploy:
                needs: [biuld]
                run: ./deploy
              test:
                rn: make test
            """, file: "graph.yaml")
        let result = try moon.run(["check", "graph.yaml"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("""
            graph.yaml:6:13: error: node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)
                6 |     needs: [biuld]
                  |             ^~~~~
            """))
        #expect(result.stderr.contains("graph.yaml:9:5: error: unknown key 'rn'"))
        #expect(result.stderr.contains("did you mean 'run'?"))
        #expect(result.stderr.contains("3 errors in graph.yaml"))
        #expect(result.stderr.contains("node 'test' has nothing to do"))
        #expect(!result.stderr.contains("\u{1B}["), "NO_COLOR: no escape sequences")
    }

    @Test func aCycleIsReportedWithItsPath() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { needs: c, run: "true" }
              b: { needs: a, run: "true" }
              c: { needs: b, run: "true" }
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("a -> c -> b -> a") || result.stderr.contains("a -> b -> c -> a"))
    }

    @Test func hostileInputIsAQuickErrorNotACrash() throws {
        let moon = try Moon()
        let laughs = """
            version: 1
            x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
            x-b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
            x-c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
            x-d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
            x-e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
            x-f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
            x-g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
            x-h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
            nodes: { a: { run: [*h] } }
            """
        try moon.write("laughs.yaml", laughs)
        try moon.write("deep.yaml", String(repeating: "[", count: 200_000))
        try moon.write("empty.yaml", "")
        try Data([0x00, 0xFF, 0xFE, 0x01, 0x80]).write(to: URL(fileURLWithPath: moon.path("binary.yaml")))
        for file in ["laughs.yaml", "deep.yaml", "empty.yaml", "binary.yaml"] {
            let result = try moon.run(["check", file], limit: 10)
            #expect(result.status == 2, "\(file)")
            #expect(result.stderr.contains("\(file):"), "\(file): \(result.stderr)")
        }
    }

    @Test func listShowsDescriptionsNeedsAndQueues() throws {
        let moon = try Moon()
        let result = try moon.run(["list", Moon.root.appendingPathComponent("examples/queues.yaml").path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("deploy"))
        #expect(result.stdout.contains("needs: build, migrate-2"))
        #expect(result.stdout.contains("queue: db"))
    }

    @Test func theDryRunStartsNothing() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              first: { run: touch first-ran }
              second: { needs: first, run: touch second-ran }
            """)
        let result = try moon.run(["run", "-n"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("first"))
        #expect(result.stdout.contains("second"))
        let firstAt = result.stdout.range(of: "first")?.lowerBound
        let secondAt = result.stdout.range(of: "second")?.lowerBound
        #expect(firstAt != nil && secondAt != nil && firstAt! < secondAt!)
        #expect(moon.read("first-ran") == nil)
    }

    /// `moon graph` reads the graph `moon run --set` would: a var given only
    /// with --set plans there too (the way to a dry run's plan as JSON).
    @Test func graphTakesSetAsRunDoes() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: 'echo ${{ vars.tag }}' }\n")
        #expect(try moon.run(["graph", "--format", "json"]).status == 2)
        let set = try moon.run(["graph", "--format", "json", "--set", "tag=v1"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("\"echo ${{ vars.tag }}\""))
        #expect(try moon.run(["graph", "--set", "novalue"]).status == 2)
    }

    @Test func graphFormats() throws {
        let moon = try Moon()
        let file = Moon.root.appendingPathComponent("examples/quickstart.yaml").path
        let json = try moon.run(["graph", file, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["nodes"] as? [Any])?.count == 7)
        #expect((object?["edges"] as? [Any])?.count == 6)
        #expect((object?["levels"] as? [Any]) != nil)
        let dot = try moon.run(["graph", file, "--format", "dot"])
        #expect(dot.stdout.hasPrefix("digraph"))
        #expect(dot.stdout.contains("\"three\" -> \"zero\""))
        let mermaid = try moon.run(["graph", file, "--format", "mermaid"])
        #expect(mermaid.stdout.hasPrefix("flowchart"))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/dot") {
            try moon.write("g.dot", dot.stdout)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dot")
            process.arguments = ["-Tsvg", moon.path("g.dot"), "-o", moon.path("g.svg")]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "Graphviz accepts the DOT")
        }
    }

    @Test func schemaCommandPrintsTheShippedSchema() throws {
        let moon = try Moon()
        let result = try moon.run(["schema"])
        let shipped = try String(contentsOf: Moon.root.appendingPathComponent("schema/moon-graph.schema.json"), encoding: .utf8)
        #expect(result.status == 0)
        #expect(result.stdout == shipped)
    }

    @Test func versionAndHelp() throws {
        let moon = try Moon()
        #expect(try moon.run(["--version"]).stdout.hasPrefix("moon 0."))
        for sub in ["run", "check", "list", "graph", "schema", "cache"] {
            let help = try moon.run([sub, "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE"))
        }
        #expect(try moon.run(["cache", "--help"]).stdout.contains("prunes it to 5 GiB"))
    }
}

/// An error inside a YAML anchor merged into many nodes is one error that
/// names the nodes, whatever the kind of error.
@Suite struct AnchorErrorTests {
    @Test func anErrorInAMergedAnchorIsReportedOnce() throws {
        var graph = """
            version: 1
            x-test: &test
              timout: 60s
              retry: { times: 2, delay: "5 secs" }
              needs: [biuld]
              run: "echo ${{ vars.nope }}"
            nodes:
              build: { run: "true" }

            """
        for n in 0..<22 { graph += "  test-\(n): { <<: *test, description: \"test \(n)\" }\n" }
        let moon = try Moon(graph: graph)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        let errors = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }
        #expect(errors.count == 4, "\(result.stderr)")
        #expect(result.stderr.contains("unknown key 'timout' (did you mean 'timeout'?) (in 22 nodes: test-0, test-1, test-2"), "\(result.stderr)")
        #expect(result.stderr.contains("invalid duration '5 secs'"))
        #expect(result.stderr.contains("needs unknown node 'biuld' (did you mean 'build'?) (in 22 nodes"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "valid keys").count <= 2)
        #expect(result.stderr.contains("4 errors in moon.yaml"))
        // An error in one node's own text still names that node alone.
        try moon.write("one.yaml", "version: 1\nnodes:\n  a: { runn: x }\n  b: { runn: y }\n")
        let one = try moon.run(["check", "one.yaml"])
        #expect(one.stderr.contains("unknown key 'runn' in node 'a'") && one.stderr.contains("unknown key 'runn' in node 'b'"))
    }
}
