import Foundation
import MoonEvents
import Testing

/// `sources:`/`generates:`, `--force`, `moon status` and `moon history`, through the real binary.
@Suite struct IncrementalTests {
    static let graph = """
        version: 1
        nodes:
          gen:
            sources: [src/**/*.txt]
            generates: [out.txt]
            run: cat src/*.txt src/deep/*.txt > out.txt && echo "lines=$(wc -l < out.txt | tr -d ' ')" >> "$MOON_OUTPUT"
          use:
            needs: gen
            run: echo "gen made ${{ needs.gen.outputs.lines }} lines"
        """

    /// How `gen` went: "ran" or "up-to-date"; and what `use` printed.
    func outcome(_ result: Moon.Result) -> (gen: String, use: [String]) {
        (result.outcome("gen"), result.events("next", node: "use").compactMap(\.text))
    }

    func setMtime(_ moon: Moon, _ name: String, secondsAgo: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-secondsAgo)], ofItemAtPath: moon.path(name))
    }

    /// A run with nothing to do adds its history and touches nothing else
    /// in `.moon/`: the resume record stays the same file, and a store whose
    /// WAL once grew large (a first run over thousands of files) is not
    /// checkpointed again at every start, which would sync it each time.
    @Test func aRunWithNothingToDoRewritesNoStateFile() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                sources: [src/*.txt]
                generates: [out.txt]
                run: touch out.txt
            """)
        try moon.makeDirectory("src")
        // Written a while ago: a file changed within the stat cache's racy
        // margin of its hashing is hashed (and its entry written) again by a
        // next run, which a fast build reaches within that margin.
        for i in 0..<2000 {
            try moon.write("src/f\(i).txt", "x")
            try setMtime(moon, "src/f\(i).txt", secondsAgo: 10)
        }
        #expect(try moon.run(["run"]).status == 0)
        func inode(_ name: String) -> UInt64? {
            (try? FileManager.default.attributesOfItem(atPath: moon.path(name)))?[.systemFileNumber] as? UInt64
        }
        let database = { try Data(contentsOf: URL(fileURLWithPath: moon.path(".moon/state.db"))) }
        for round in 0..<3 {
            let (before, record) = (try database(), inode(".moon/resume/moon.yaml.json"))
            let result = try moon.run(["run", "--json"])
            #expect(outcome(result).gen == "up-to-date", "\(result.stderr)")
            if round > 0 { #expect(try database() == before, "run \(round) checkpointed the store") }
            #expect(record != nil && inode(".moon/resume/moon.yaml.json") == record, "run \(round) rewrote the resume record")
        }
    }

    @Test func theIssueSequence() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("src/deep")
        try moon.write("src/a.txt", "a\n")
        try moon.write("src/deep/b.txt", "b\n")

        func run(_ extra: [String] = []) throws -> (gen: String, use: [String], stderr: String) {
            let result = try moon.run(["run", "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let o = outcome(result)
            return (o.gen, o.use, result.stderr)
        }

        // First run: everything runs.
        var r = try run()
        #expect(r.gen == "ran")
        #expect(r.use == ["gen made 2 lines"])
        #expect(r.stderr.isEmpty)
        // Nothing changed: gen is skipped, and its outputs still reach use.
        r = try run()
        #expect(r.gen == "up-to-date")
        #expect(r.use == ["gen made 2 lines"])
        // Content changed.
        try moon.write("src/deep/b.txt", "b\nc\n")
        r = try run()
        #expect(r.gen == "ran")
        #expect(r.use == ["gen made 3 lines"])
        // Touched, same content.
        try setMtime(moon, "src/deep/b.txt", secondsAgo: 3)
        #expect(try run().gen == "up-to-date")
        // Output deleted.
        try FileManager.default.removeItem(atPath: moon.path("out.txt"))
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("gen  runs: output missing: out.txt"), "\(status.stdout)")
        // Restored from the output cache (docs/incremental.md, "The output cache").
        #expect(try run().gen == "cache-hit")
        #expect(try run().gen == "up-to-date")
        // Command changed.
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "cat src", with: "cat  src"))
        #expect(try moon.run(["status"]).stdout.contains("gen  runs: command changed"))
        #expect(try run().gen == "ran")
        #expect(try moon.run(["status"]).stdout.contains("gen  up to date"))
        // --force and -B.
        #expect(try run(["--force"]).gen == "ran")
        #expect(try run(["-B"]).gen == "ran")
        #expect(try run().gen == "up-to-date")
        // A corrupt store: a warning, a full run, and a new store after it.
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: moon.path(".moon/state.db")))
        try? FileManager.default.removeItem(atPath: moon.path(".moon/state.db-wal"))
        try? FileManager.default.removeItem(atPath: moon.path(".moon/state.db-shm"))
        r = try run()
        // Not up to date; its outputs come back from the output cache.
        #expect(r.gen == "cache-hit")
        #expect(r.stderr.contains("warning") && r.stderr.contains("corrupt"), "\(r.stderr)")
        r = try run()
        #expect(r.gen == "up-to-date")
        #expect(r.stderr.isEmpty)
    }

    /// The store is opened while the graph loads only when it exists: an
    /// invalid graph makes no `.moon/`; a valid one's run then makes it, and
    /// the next run (which opens it early) finds its node up to date.
    @Test func anInvalidGraphMakesNoStoreAndAValidOneUsesIt() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: \"true\", needs: [nope] }\n")
        #expect(try moon.run(["run", "-q"]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: moon.path(".moon")), "an invalid graph makes no store")
        try moon.write("moon.yaml", Self.graph)
        try moon.makeDirectory("src/deep")
        try moon.write("src/a.txt", "a\n")
        try moon.write("src/deep/b.txt", "b\n")
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: moon.path(".moon/state.db")))
        let second = try moon.run(["run", "--json"])
        #expect(second.stdout.contains("\"reason\":\"up-to-date\""), "\(second.stdout)")
    }

    @Test func statusNamesTheChangedFile() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("src/deep")
        try moon.write("src/a.txt", "a\n")
        try moon.write("src/deep/b.txt", "b\n")
        let before = try moon.run(["status"])
        #expect(before.stdout.contains("gen  runs: never run successfully"), "\(before.stdout)")
        #expect(before.stdout.contains("use  runs (no sources)"))
        #expect(!FileManager.default.fileExists(atPath: moon.path(".moon")), "status creates nothing")
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(try moon.run(["status"]).stdout.contains("gen  up to date"))
        try moon.write("src/a.txt", "A\n")
        let after = try moon.run(["status"])
        #expect(after.stdout.contains("gen  runs: src/a.txt changed"), "\(after.stdout)")
    }

    @Test func historyShowsRecentRuns() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              flaky:
                run: test "$MOON_ATTEMPT" = 2
                retry: 1
            """)
        #expect(try moon.run(["history"]).stdout.contains("no runs"))
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(try moon.run(["run", "-q", "-B"]).status == 0)
        let history = try moon.run(["history", "--nodes"])
        #expect(history.status == 0)
        let lines = history.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(history.stdout)")
        #expect(lines.first?.hasPrefix("#2") == true)
        #expect(lines.first?.contains("ok") == true && lines.first?.contains("1 succeeded") == true)
        #expect(lines[1].contains("flaky  succeeded") && lines[1].contains("(2 attempts)"), "\(lines[1])")
        #expect(try moon.run(["history", "-n", "1"]).stdout.split(separator: "\n").count == 1)
    }

    @Test func twoConcurrentRunsOnOneGraphBothSucceed() throws {
        var yaml = "version: 1\nnodes:\n"
        for i in 0..<12 {
            yaml += "  n\(i):\n    sources: [s\(i).txt]\n    run: echo \"v=\(i)\" >> \"$MOON_OUTPUT\"\n"
        }
        let moon = try Moon(graph: yaml)
        for i in 0..<12 { try moon.write("s\(i).txt", "\(i)") }
        let first = try moon.start(["run", "--json"])
        let second = try moon.start(["run", "--json"])
        let a = try first.wait()
        let b = try second.wait()
        #expect(a.status == 0, "\(a.stderr)")
        #expect(b.status == 0, "\(b.stderr)")
        #expect(!a.stderr.contains("warning") && !b.stderr.contains("warning"), "\(a.stderr)\(b.stderr)")
        // The store is intact: the next run skips everything, without a warning.
        let third = try moon.run(["run", "--json"])
        #expect(third.status == 0)
        #expect(third.stderr.isEmpty, "\(third.stderr)")
        #expect(third.events("skip").count == 12)
        // Each run that ran or restored something is in the history; a no-op
        // (the third, and the second when the first had done it all) is not.
        let ranSomething = [a, b].filter { $0.events("skip").filter { $0.reason != .cacheHit }.count < 12 }.count
        let history = try moon.run(["history"]).stdout
        #expect(history.split(separator: "\n").count == ranSomething, "\(history)")
    }
}
