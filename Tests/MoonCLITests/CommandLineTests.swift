import Foundation
import MoonEvents
import Testing

/// The command line does what a build user means: `[FILE] [NODE...]` is
/// read by one rule in every command (GraphFileLocator), and a stopped run
/// says it was interrupted.
@Suite struct CommandLineTests {
    /// A build graph names nodes after their outputs; after a build, `lua`
    /// is both a node and a binary file.
    static let build = """
        version: 1
        nodes:
          lua.o: { run: "echo compiled" }
          lua: { needs: lua.o, run: "echo linked" }
        """

    private func builtTree() throws -> Moon {
        let moon = try Moon(graph: Self.build)
        // A binary beside the graph, as a linker leaves it.
        try Data([0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x00, 0x00]).write(to: URL(fileURLWithPath: moon.path("lua")))
        try moon.write("lua.o", "\u{0}object")
        return moon
    }

    /// `moon run lua` runs the node `lua` of moon.yaml, not the binary `lua`
    /// read as YAML (it said "the file is binary, not YAML text", exit 2).
    @Test func aNodeOfTheDefaultFileWinsOverAFileOfTheSameName() throws {
        let moon = try builtTree()
        let result = try moon.run(["run", "lua"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("lua │ linked"))
        #expect(result.stdout.contains("lua.o │ compiled"))
    }

    /// Every command that takes `[FILE] [NODE...]` reads a bare name the same way.
    @Test func everyCommandWithNodesFollowsTheRule() throws {
        let moon = try builtTree()
        let status = try moon.run(["status", "lua.o"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("lua.o"))
        let graph = try moon.run(["graph", "lua", "--format", "json"])
        #expect(graph.status == 0, "\(graph.stderr)")
        #expect(graph.stdout.contains("\"lua.o\""))
        let dryRun = try moon.run(["run", "-n", "lua.o"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("lua.o") && !dryRun.stdout.contains("linked"))
        let export = try moon.run(["export", "--format", "sbatch", "lua"])
        #expect(export.status == 0, "\(export.stderr)")
    }

    /// A path (a `/` or a .yaml/.yml name) is always the file; a bare name
    /// that is a file but no node gets a hint that says how to read it as
    /// the graph.
    @Test func aPathIsTheFileAndAFileThatIsNoNodeGetsAHint() throws {
        let moon = try builtTree()
        try moon.write("other", "version: 1\nnodes:\n  x: { run: \"echo from-other\" }\n")
        let explicit = try moon.run(["run", "./other"])
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(explicit.stdout.contains("x │ from-other"))
        let bare = try moon.run(["run", "other"])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("unknown node 'other'"), "\(bare.stderr)")
        #expect(bare.stderr.contains("write ./other"), "\(bare.stderr)")
        let binary = try moon.run(["run", "./lua"])
        #expect(binary.status == 2)
        #expect(binary.stderr.contains("binary"), "\(binary.stderr)")
        #expect(binary.stderr.contains("moon.yaml here has a node 'lua'; to select it, give its name without a path: moon run lua"),
                "\(binary.stderr)")
        // Without moon.yaml here, a bare name that is a file is the file (as before).
        try FileManager.default.removeItem(atPath: moon.path("moon.yaml"))
        let noDefault = try moon.run(["run", "other"])
        #expect(noDefault.status == 0, "\(noDefault.stderr)")
        #expect(noDefault.stdout.contains("x │ from-other"))
    }

    /// After Ctrl-C the summary, the JSON stream and `moon history` say
    /// interrupted, not FAILED; the exit code stays 128 + the signal.
    static let signals: [(Int32, String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    @Test(arguments: signals)
    func anInterruptedRunSaysSo(_ signal: Int32, _ name: String) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              quick: { run: "echo done" }
              slow: { needs: quick, run: "touch started; sleep 30" }
            """)
        for json in [false, true] {
            try? FileManager.default.removeItem(atPath: moon.path("started"))
            let running = try moon.start(["run"] + (json ? ["--json"] : []))
            #expect(eventually(20) { FileManager.default.fileExists(atPath: moon.path("started")) })
            running.signal(signal)
            let result = try running.wait(limit: 30)
            #expect(result.status == 128 + signal)
            if json {
                let complete = result.events("graph-complete").first
                #expect(complete?.interrupted == name, "\(result.stdout)")
                #expect(complete?.ok == false)
            } else {
                #expect(result.stdout.contains("moon: interrupted (\(name)) - 1 succeeded, 1 canceled"), "\(result.stdout)")
                #expect(!result.stdout.contains("FAILED"))
            }
        }
        let history = try moon.run(["history"])
        #expect(history.status == 0)
        let lines = history.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains(" interrupted ") }, "\(history.stdout)")
        // A recording replays the same way.
        try? FileManager.default.removeItem(atPath: moon.path("started"))
        let recorded = try moon.start(["run", "--json"])
        #expect(eventually(20) { FileManager.default.fileExists(atPath: moon.path("started")) })
        recorded.signal(signal)
        let stream = try recorded.wait(limit: 30)
        try moon.write("events.jsonl", stream.stdout)
        let replay = try moon.run(["replay", "events.jsonl"])
        #expect(replay.stdout.contains("moon: interrupted (\(name))"), "\(replay.stdout)")
        #expect(replay.status == 1)
    }

    /// A failed run still says FAILED (and history too).
    @Test func aFailedRunStillSaysFailed() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  bad: { run: \"exit 3\" }\n")
        let result = try moon.run(["run"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("moon: FAILED - 0 succeeded, 1 failed"))
        let history = try moon.run(["history"])
        #expect(history.stdout.contains(" FAILED "), "\(history.stdout)")
    }
}
