import Foundation
import Testing

/// The compiled graph (`GraphCache`) as the binary uses it: a run from an
/// entry is the run a fresh load gives, an edit of anything the graph was
/// made from is seen at once (even within the same second), a load with
/// warnings warns every time, and a planted entry changes nothing. Each test
/// waits once for its files to be older than the 2 s racy window.
@Suite struct CompiledGraphTests {
    static let graph = """
        version: 1
        vars:
          word: one
        includes:
          lib: lib.yaml
        dotenv: [.env]
        nodes:
          hello:
            run: echo "hello ${{ vars.word }} $GREETING ${{ env.FROM_ENV }}"
          each:
            for-each: { glob: "src/*.c" }
            run: echo "item ${{ item }}"
          all:
            needs: [hello, each, lib:core]
        """

    static let lib = """
        version: 1
        nodes:
          core:
            run: echo core one
        """

    private func project() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.write("lib.yaml", Self.lib)
        try moon.write(".env", "GREETING=hi\n")
        try moon.makeDirectory("src")
        try moon.write("src/a.c", "")
        return moon
    }

    /// Files written just now are older than the racy window afterwards.
    private func age() { Thread.sleep(forTimeInterval: 2.2) }

    private func entries(_ moon: Moon) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/graphs"))) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// What each node printed, in node order.
    private func printed(_ result: Moon.Result) -> [String] {
        ["hello", "each[src/a.c]", "each[src/b.c]", "lib:core"].flatMap { result.printed($0) }
    }

    private func run(_ moon: Moon, _ arguments: [String] = [], environment: [String: String] = ["FROM_ENV": "e1"]) throws -> Moon.Result {
        let result = try moon.run(["run", "moon.yaml", "all", "--output", "json"] + arguments, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    @Test func aRunFromTheCompiledGraphIsTheRunOfAFreshLoad() throws {
        let moon = try project()
        let fresh = try run(moon)
        // Just written: too recent to store.
        #expect(entries(moon).isEmpty)
        age()
        _ = try run(moon)
        let entry = try #require(entries(moon).first)
        let stored = try FileManager.default.attributesOfItem(atPath: moon.path(".cache/graphs/" + entry))
        let hit = try run(moon)
        #expect(printed(hit) == printed(fresh))
        #expect(printed(hit) == ["hello one hi e1", "item src/a.c", "core one"])
        // A hit rewrites nothing.
        let after = try FileManager.default.attributesOfItem(atPath: moon.path(".cache/graphs/" + entry))
        #expect(after[.modificationDate] as? Date == stored[.modificationDate] as? Date)
        #expect(after[.systemFileNumber] as? Int == stored[.systemFileNumber] as? Int)
        // The other commands read the same graph.
        let list = try moon.run(["list", "moon.yaml"])
        #expect(list.status == 0 && list.stdout.contains("each[src/a.c]") && list.stdout.contains("lib:core"), "\(list.stdout)")
        #expect(try moon.run(["check", "moon.yaml"]).status == 0)
    }

    /// The graph file edited with the same size, its mtime put back, right
    /// after an entry was written; then each other input in turn.
    @Test func everyEditIsSeenAtOnce() throws {
        let moon = try project()
        age()
        _ = try run(moon)
        #expect(entries(moon).count == 1)
        _ = try run(moon)

        let mtime = try FileManager.default.attributesOfItem(atPath: moon.path("moon.yaml"))[.modificationDate]!
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "word: one", with: "word: two"))
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: moon.path("moon.yaml"))
        #expect(printed(try run(moon)).first == "hello two hi e1", "the graph file")

        try moon.write("lib.yaml", Self.lib.replacingOccurrences(of: "core one", with: "core two"))
        #expect(printed(try run(moon)).last == "core two", "an include")

        try moon.write(".env", "GREETING=hey\n")
        #expect(printed(try run(moon)).first == "hello two hey e1", "a dotenv file")

        #expect(printed(try run(moon, ["--set", "word=three"])).first == "hello three hey e1", "--set")
        #expect(printed(try run(moon, environment: ["FROM_ENV": "e2"])).first == "hello two hey e2", "an environment variable")

        try moon.write("src/b.c", "")
        #expect(printed(try run(moon)).contains("item src/b.c"), "a new file in a for-each glob's directory")
    }

    /// A hit prints nothing, so a load with warnings is never stored.
    @Test func aLoadWithWarningsWarnsEveryTime() throws {
        let moon = try Moon(graph: "version: 1\nnodes: {}\n")
        age()
        for _ in 0..<2 {
            let result = try moon.run(["run", "moon.yaml"])
            #expect(result.stderr.contains("the graph has no nodes"), "\(result.stderr)")
        }
        #expect(entries(moon).isEmpty)
    }

    /// An entry from another project put where this one's would be, and
    /// garbage there, change nothing: the run is a fresh load's, and the
    /// entry is replaced.
    @Test func aPlantedEntryChangesNothing() throws {
        let other = try project()
        try other.write("lib.yaml", Self.lib.replacingOccurrences(of: "echo core one", with: "touch PWNED"))
        let moon = try project()
        age()
        _ = try run(other)
        _ = try run(moon)
        let planted = try #require(entries(other).first)
        let target = moon.path(".cache/graphs/" + (try #require(entries(moon).first)))
        for bytes in [try Data(contentsOf: URL(fileURLWithPath: other.path(".cache/graphs/" + planted))), Data("moon-graph\0garbage".utf8)] {
            try FileManager.default.removeItem(atPath: target)
            try bytes.write(to: URL(fileURLWithPath: target))
            chmod(target, 0o600)
            let result = try run(moon)
            #expect(printed(result).last == "core one")
            #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED")))
            #expect(result.stderr.isEmpty || !result.stderr.contains("graph"), "\(result.stderr)")
        }
    }
}
