import Foundation
import MoonCommand
import MoonDocument
import Testing
@testable import MoonGraph

/// Graph files as YAML text, through the real loader. These need the libyaml
/// loader (MoonDocument); with the stub loader they are skipped.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct GraphLoaderTests {
    @Test func loadsTheDesignExampleFromText() throws {
        let result = load("""
        version: 1                      # required
        name: release
        description: Build and ship
        vars:
          channel: beta
        env:
          LC_ALL: C
        queues:
          default: { concurrency: auto }
          net:     { concurrency: 4 }
          db:      { concurrency: 1 }
          cluster: { executor: slurm, concurrency: 100, slurm: { partition: debug } }
        defaults:
          queue: default
          timeout: 10m
          retry: 0
          shell: sh
        nodes:
          fetch:
            description: Download the data
            run: curl -fsS "$URL" -o data.json
            env: { URL: https://example.org/data.json }
            queue: net
            retry: { times: 3, delay: 1s, backoff: 2 }
            timeout: 30s
          compile:
            run: [swift, build, -c, release]
            dir: app
          wait:
            uses: sleep
            with: { duration: 2s }
          package:
            needs: [fetch, compile, wait]
            run: ./package.sh
          notify:
            needs: [package]
            if: always
            continue-on-error: true
            run: ./notify.sh

        """, path: "release.yaml")
        #expect(lines(result) == [])
        let g = try #require(result.graph)
        #expect(g.nodes.map(\.name) == ["fetch", "compile", "wait", "package", "notify"])
        #expect(g.queues.map(\.name) == ["default", "net", "db", "cluster"])
        #expect(g["fetch"]?.retry == RetryPolicy(times: 3, delay: .seconds(1), backoff: 2))
        #expect(g["package"]?.needs == [0, 1, 2])
    }

    @Test func reportsTheDesignErrorExample() {
        let result = load("""
        version: 1
        nodes:
          build:
            run: make
          deploy:
            needs: [biuld]
            run: ./deploy.sh

        """)
        #expect(lines(result) == ["6:13: error: node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)"])
        #expect(result.diagnostics.first?.span?.end.column == 18)
    }

    @Test func anchorsAliasesAndMergeKeysWithXKeys() throws {
        let g = try #require(load("""
        version: 1
        x-common: &common
          queue: net
          retry: 2
          env: { MODE: fast }
        queues:
          net: { concurrency: 2 }
        nodes:
          a:
            <<: *common
            run: echo a
          b:
            <<: *common
            needs: a
            run: echo b
            retry: 0

        """).graph)
        #expect(g.nodes.map { g.queue(of: $0).name } == ["net", "net"])
        #expect(g.nodes.map(\.retry.times) == [2, 0])
        #expect(g.nodes[1].env["MODE"] == "fast")
    }

    @Test func loaderErrorsAreIncluded() {
        let result = load("version: 1\nnodes:\n  a: [unclosed\n")
        #expect(result.graph == nil)
        #expect(result.hasErrors)
        let duplicate = load("version: 1\nnodes:\n  a: { run: x }\n  a: { run: y }\n")
        #expect(duplicate.graph == nil)
        #expect(duplicate.errors.first?.span?.start.line == 4)
        #expect(load("").hasErrors)
    }

    @Test func everyErrorOfAFileAtOnce() {
        let result = load("""
        version: 1
        queues:
          db: { concurrency: 0 }
        nodes:
          a:
            run: make
            queue: dbb
            timeout: soon
          b:
            needs: [a, c]
            uses: slep

        """)
        #expect(lines(result) == [
            "3:22: error: invalid concurrency '0' for queue 'db'; write a positive integer or 'auto'",
            "7:12: error: node 'a' uses unknown queue 'dbb' (did you mean 'db'?)",
            "8:14: error: invalid duration 'soon'; write a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds",
            "10:16: error: node 'b' needs unknown node 'c' (did you mean 'a'?)",
            "11:11: error: unknown built-in 'slep' (did you mean 'sleep'?)",
        ])
    }

    @Test func quotedNumbersAreStrings() {
        #expect(lines(load("version: 1\nqueues:\n  q: { concurrency: \"4\" }\nnodes:\n  a: { run: x }\n")) == [
            "3:21: error: invalid concurrency the string \"4\" for queue 'q'; write a positive integer or 'auto'",
        ])
    }

    /// The builder's spans are the loader's: the same documents give the same diagnostics both ways.
    @Test(arguments: Self.parityDocuments.indices)
    func builderAndLoaderAgree(index: Int) {
        let document = Self.parityDocuments[index]
        let (text, _) = YAMLLayout.render(document)
        #expect(lines(load(text)) == lines(decode(document)), "\(text)")
    }

    static let parityDocuments: [Y] = [
        doc(["a": ["rn": "x"], "b": ["run": "y", "needs": "zz"], "c": ["uses": "slep"]]),
        doc(["a": ["run": ["make", ["x": 1]]], "b": ["run": "x", "needs": ["b"]]]),
        doc(["a": ["run": "x", "retry": ["delay": "1s", "backof": 2]], "b": ["run": "x", "if": "sucess"]]),
        doc(["a": ["run": "x", "env": ["L": ["a"], "1X": "y", "E": .null]]]),
        doc(["a": ["run": "x", "slurm": ["partiton": "p", "cpus-per-task": 0, "mem": "lots"]]]),
        doc(["a": ["uses": "wait-for", "with": ["tcp": "localhost"]], "b": ["uses": "sleep", "with": ["duratoin": 1]]]),
        doc(["a": ["run": "x", "needs": "b"], "b": ["run": "x", "needs": "a"]]),
        ["nodes": ["a": ["run": "x"]]],
        ["version": 2, "nodez": [:], "nodes": ["a": "echo"]],
        doc(["a": ["run": "x"]], extra: [("queues", ["q0": ["concurrency": 0], "q1": ["concurrency": .quoted("4")]])]),
    ]
}

/// The repository's example graphs are valid.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct ExampleGraphTests {
    @Test func examplesLoadWithoutDiagnostics() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: root.path))?.filter { $0.hasSuffix(".yaml") }.sorted() ?? []
        #expect(!files.isEmpty, "no examples found in \(root.path)")
        for file in files {
            let text = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
            let result = load(text, path: "examples/\(file)")
            #expect(lines(result) == [], "\(file)")
        }
    }
}
