import Foundation
import Testing

/// Incremental runs that never lie, through the real binary: the graph
/// file's spelling does not matter, a node that started and did not succeed
/// runs again, `depfile:` sources, and `moon status`/`moon run -n` say what
/// a run would do.
@Suite struct IncrementalTruthTests {
    static let graph = """
        version: 1
        nodes:
          gen:
            sources: [in.txt]
            generates: [out.txt]
            run: cp in.txt out.txt
          sub:
            dir: sub
            sources: [in.txt]
            run: echo ran in sub
        """

    /// Whether `node` ran ("ran"), was skipped as up to date ("up-to-date"), or neither ("?").
    static func outcome(_ result: Moon.Result, _ node: String) -> String {
        if let reason = result.events("skip", node: node).first?["reason"] as? String { return reason }
        return result.events("complete", node: node).isEmpty ? "?" : "ran"
    }

    func project() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try FileManager.default.createDirectory(atPath: moon.path("sub"), withIntermediateDirectories: true)
        try moon.write("in.txt", "a\n")
        return moon
    }

    /// B1: every spelling of the graph file's path (and every directory moon
    /// starts in) is one graph: a no-op under one is a no-op under all, and
    /// `moon status` agrees.
    @Test func theGraphFilesSpellingDoesNotMatter() throws {
        let moon = try project()
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("moon-e2e-link-\(UUID().uuidString)").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: moon.directory.path)
        defer { try? FileManager.default.removeItem(atPath: link) }
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Self.outcome(first, "gen") == "ran")
        let spellings: [(arguments: [String], directory: String?)] = [
            ([], nil),
            (["moon.yaml"], nil),
            (["./moon.yaml"], nil),
            ([moon.path("moon.yaml")], nil),
            (["../moon.yaml"], "sub"),
            (["sub/../moon.yaml"], nil),
            ([link + "/moon.yaml"], nil),
            ([link + "/moon.yaml"], "sub"),
            ([link + "/sub/../moon.yaml"], nil),
            (["./sub/.././moon.yaml"], nil),
        ]
        for (arguments, directory) in spellings {
            let status = try moon.run(["status"] + arguments, in: directory)
            #expect(status.stdout.contains("gen  up to date") && status.stdout.contains("sub  up to date"),
                    "moon status \(arguments) in \(directory ?? "."): \(status.stdout)\(status.stderr)")
            let result = try moon.run(["run", "--json"] + arguments, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.outcome(result, "gen") == "up-to-date", "moon run \(arguments) in \(directory ?? ".")")
            #expect(Self.outcome(result, "sub") == "up-to-date", "moon run \(arguments) in \(directory ?? ".")")
            let history = try moon.run(["history"] + arguments, in: directory)
            #expect(history.status == 0 && history.stdout.contains("up to date"), "\(history.stdout)\(history.stderr)")
        }
        // One store, beside the graph file, whatever the spelling.
        #expect(FileManager.default.fileExists(atPath: moon.path(".moon/state.db")))
        #expect(!FileManager.default.fileExists(atPath: moon.path("sub/.moon")))
    }

    /// A graph of nodes whose command prints a header, waits, and writes the rest.
    static let slowGraph = """
        version: 1
        nodes:
          gen:
            sources: [in.txt]
            generates: [out.txt]
            run: |
              echo $$ > node.pid
              echo header > out.txt
              if [ -f fail ]; then exit 1; fi
              if [ -f slow ]; then sleep 30; fi
              cat in.txt >> out.txt
              echo footer >> out.txt
        """

    func slowProject() throws -> Moon {
        let moon = try Moon(graph: Self.slowGraph)
        try moon.write("in.txt", "src\n")
        let first = try moon.run(["run", "--json"])
        #expect(Self.outcome(first, "gen") == "ran", "\(first.stderr)")
        #expect(moon.read("out.txt") == "header\nsrc\nfooter\n")
        #expect(Self.outcome(try moon.run(["run", "--json"]), "gen") == "up-to-date")
        return moon
    }

    /// After a forced run that was stopped half-way, the node runs again and its output is whole.
    func expectRerun(_ moon: Moon) throws {
        #expect(moon.read("out.txt") == "header\n", "the stopped run left half an output")
        try? FileManager.default.removeItem(atPath: moon.path("slow"))
        try? FileManager.default.removeItem(atPath: moon.path("fail"))
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("gen  runs: its last run did not succeed"), "\(status.stdout)")
        let next = try moon.run(["run", "--json"])
        #expect(Self.outcome(next, "gen") == "ran", "\(next.stdout)")
        #expect(moon.read("out.txt") == "header\nsrc\nfooter\n")
        #expect(Self.outcome(try moon.run(["run", "--json"]), "gen") == "up-to-date")
    }

    /// B2: `moon run -B`, interrupted by SIGINT, SIGTERM or SIGKILL of moon
    /// once the node has begun: the next run reruns the node.
    @Test(arguments: [SIGINT, SIGTERM, SIGKILL])
    func aForcedRunStoppedHalfWayRunsAgain(signal: Int32) throws {
        let moon = try slowProject()
        try moon.write("slow", "")
        let running = try moon.start(["run", "-B", "-q"])
        #expect(eventually(30) { moon.read("out.txt") == "header\n" })
        running.signal(signal)
        let stopped = try running.wait()
        #expect(stopped.status != 0)
        if signal == SIGKILL {
            // The node outlives a killed moon (it has its own process group): end it.
            if let text = moon.read("node.pid"), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
            }
        }
        try expectRerun(moon)
    }

    /// B2: a forced run that fails leaves the node to run again.
    @Test func aFailedForcedRunRunsAgain() throws {
        let moon = try slowProject()
        try moon.write("fail", "")
        let failed = try moon.run(["run", "-B", "-q"])
        #expect(failed.status == 1)
        try expectRerun(moon)
    }
}
