import Foundation
import MoonEvents
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

    func project() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("sub")
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
        #expect(first.outcome("gen") == "ran")
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
            #expect(result.outcome("gen") == "up-to-date", "moon run \(arguments) in \(directory ?? ".")")
            #expect(result.outcome("sub") == "up-to-date", "moon run \(arguments) in \(directory ?? ".")")
            // The same history under every spelling: the first run's line, and no line for a no-op.
            let history = try moon.run(["history"] + arguments, in: directory)
            #expect(history.status == 0 && history.stdout.contains("succeeded"), "\(history.stdout)\(history.stderr)")
            #expect(history.stdout.split(separator: "\n").count == 1, "\(history.stdout)")
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
        #expect(first.outcome("gen") == "ran", "\(first.stderr)")
        #expect(moon.read("out.txt") == "header\nsrc\nfooter\n")
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "up-to-date")
        return moon
    }

    /// After a forced run that was stopped half-way, the node is not up to
    /// date: its output of the earlier success comes back whole from the
    /// output cache (or it runs again without one).
    func expectRerun(_ moon: Moon) throws {
        #expect(moon.read("out.txt") == "header\n", "the stopped run left half an output")
        try? FileManager.default.removeItem(atPath: moon.path("slow"))
        try? FileManager.default.removeItem(atPath: moon.path("fail"))
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("gen  runs: its last run did not succeed"), "\(status.stdout)")
        let next = try moon.run(["run", "--json"])
        #expect(next.outcome("gen") == "cache-hit", "\(next.stdout)")
        #expect(moon.read("out.txt") == "header\nsrc\nfooter\n")
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "up-to-date")
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
            // moon's death pipe usually ends the node; if it still lives (and
            // the pid is still this test's node, not a reused one), end it.
            if let text = moon.read("node.pid"), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
               isAlive(pid, of: moon) {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
            }
        }
        try expectRerun(moon)
    }

    /// A no-op leaves the next run a snapshot of the node states (read
    /// without SQLite), which a run stopped half-way, or a change to a
    /// source, leaves standing no longer: the node runs again, as without it.
    @Test func aNoOpSnapshotDoesNotOutliveAStoppedRun() throws {
        let moon = try slowProject()
        let stats = ["MOON_STATE_STATS": "1"]
        // The snapshot is made of store files written at least 100 ms before.
        #expect(eventually(10) { (try? moon.run(["run", "-q"], environment: stats))?.stderr.contains("from the no-op snapshot") == true })
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "up-to-date")
        try moon.write("slow", "")
        let running = try moon.start(["run", "-B", "-q"])
        #expect(eventually(30) { moon.read("out.txt") == "header\n" })
        running.signal(SIGKILL)
        #expect(try running.wait().status != 0)
        if let text = moon.read("node.pid"), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), isAlive(pid, of: moon) {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        // Not up to date: restored from the output cache, not skipped.
        try expectRerun(moon)
        // A source changed since the snapshot: its node runs.
        #expect(eventually(10) { (try? moon.run(["run", "-q"], environment: stats))?.stderr.contains("from the no-op snapshot") == true })
        try moon.write("in.txt", "changed\n")
        let changed = try moon.run(["run", "--json"])
        #expect(changed.outcome("gen") == "ran", "\(changed.stdout)")
        #expect(moon.read("out.txt") == "header\nchanged\nfooter\n")
    }

    /// B2: a forced run that fails leaves the node to run again.
    @Test func aFailedForcedRunRunsAgain() throws {
        let moon = try slowProject()
        try moon.write("fail", "")
        let failed = try moon.run(["run", "-B", "-q"])
        #expect(failed.status == 1)
        try expectRerun(moon)
    }

    // MARK: - depfile

    static let cGraph = """
        version: 1
        env: { CC: cc }
        nodes:
          x.o:
            sources: [src/x.c]
            generates: [build/x.o]
            depfile: build/x.d
            run: $CC -Iinclude -MMD -MF build/x.d -c src/x.c -o build/x.o
          y.o:
            dir: build
            sources: [src/y.c]
            generates: [build/y.o]
            depfile: y.d
            run: $CC -I../include -MMD -MF y.d -c ../src/y.c -o y.o
          z.o:
            sources: [src/z.c]
            generates: [build/z.o]
            depfile: build/z.d
            run: $CC -MD -MF build/z.d -Iinclude -c src/z.c -o build/z.o
        """

    /// Writes `name` with an mtime in the past, as an edit made before the run would have.
    func writeOld(_ moon: Moon, _ name: String, _ text: String) throws {
        try moon.write(name, text)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-10)], ofItemAtPath: moon.path(name))
    }

    func cProject() throws -> Moon {
        let moon = try Moon(graph: Self.cGraph)
        for dir in ["src", "include", "build"] {
            try moon.makeDirectory(dir)
        }
        try writeOld(moon, "include/a.h", "#define A 1\n")
        try writeOld(moon, "include/b.h", "#define B 2\n")
        try writeOld(moon, "include/my common.h", "#define C 3\n")
        try writeOld(moon, "src/x.c", "#include \"a.h\"\n#include \"my common.h\"\nint x(void) { return A + C; }\n")
        try writeOld(moon, "src/y.c", "#include \"b.h\"\n#include \"my common.h\"\nint y(void) { return B + C; }\n")
        try writeOld(moon, "src/z.c", "#include <stdio.h>\n#include \"a.h\"\nint z(void) { return A; }\n")
        return moon
    }

    /// Which of the objects ran.
    func ran(_ moon: Moon, _ extra: [String] = []) throws -> [String] {
        let result = try moon.run(["run", "--json"] + extra)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        return ["x.o", "y.o", "z.o"].filter { result.outcome($0) == "ran" }
    }

    /// Editing a header reruns only the objects whose depfile lists it
    /// (escaped spaces, `dir:`, system headers with -MD included).
    @Test func aHeaderEditRebuildsOnlyTheObjectsThatIncludeIt() throws {
        let moon = try cProject()
        #expect(try ran(moon) == ["x.o", "y.o", "z.o"])
        #expect(try ran(moon) == [], "a no-op after the build")
        try writeOld(moon, "include/a.h", "#define A 10\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("x.o  runs: include/a.h changed"), "\(status.stdout)")
        #expect(status.stdout.contains("y.o  up to date"), "\(status.stdout)")
        #expect(try ran(moon) == ["x.o", "z.o"])
        try writeOld(moon, "include/my common.h", "#define C 30\n")
        #expect(try ran(moon) == ["x.o", "y.o"])
        try writeOld(moon, "include/b.h", "#define B 20\n")
        #expect(try ran(moon) == ["y.o"])
        #expect(try ran(moon) == [])
        // A header the source no longer includes stops counting.
        try writeOld(moon, "src/z.c", "int z(void) { return 1; }\n")
        #expect(try ran(moon) == ["z.o"])
        try writeOld(moon, "include/a.h", "#define A 11\n")
        #expect(try ran(moon) == ["x.o"])
        // The store keeps them: another spelling of the graph, the same answer.
        #expect(try moon.run(["run", "--json", moon.path("moon.yaml")]).stdout.contains("\"reason\":\"up-to-date\""))
    }

    /// A checkout restored from another's cache remembers each object's
    /// headers as the restore checked them: the next run is a no-op, and a
    /// header edit reruns exactly the objects that include it.
    @Test func aRestoredObjectKnowsItsHeaders() throws {
        let cache = try Moon()
        let environment = ["MOON_CACHE_DIR": cache.path("shared")]
        let first = try cProject()
        #expect(try first.run(["run"], environment: environment).status == 0)
        let second = try cProject()
        func outcomes() throws -> [String] {
            let result = try second.run(["run", "--json"], environment: environment)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            return ["x.o", "y.o", "z.o"].map { result.outcome($0) }
        }
        #expect(try outcomes() == ["cache-hit", "cache-hit", "cache-hit"])
        #expect(try outcomes() == ["up-to-date", "up-to-date", "up-to-date"])
        try writeOld(second, "include/a.h", "#define A 10\n")
        let status = try second.run(["status"], environment: environment)
        #expect(status.stdout.contains("x.o  runs: include/a.h changed"), "\(status.stdout)")
        #expect(try outcomes() == ["ran", "up-to-date", "ran"])
        #expect(try outcomes() == ["up-to-date", "up-to-date", "up-to-date"])
    }

    /// A no-op keeps a node's sources digest only while what it digests is
    /// as it was: new patterns over the same files, or another `generates`,
    /// still run the node once.
    @Test func newPatternsOverTheSameFilesRunAgain() throws {
        let moon = try project()
        func gen() throws -> String { try moon.run(["run", "--json"]).outcome("gen") }
        #expect(try gen() == "ran")
        #expect(try gen() == "up-to-date")
        let morePatterns = Self.graph.replacingOccurrences(of: "sources: [in.txt]\n    generates",
                                                         with: "sources: [in.txt, 'none/*.txt']\n    generates")
        #expect(morePatterns != Self.graph)
        try moon.write("moon.yaml", morePatterns)
        #expect(try gen() == "ran")
        #expect(try gen() == "up-to-date")
        let moreOutputs = Self.graph.replacingOccurrences(of: "generates: [out.txt]", with: "generates: [out.txt, 'o*.txt']")
        #expect(moreOutputs != Self.graph)
        try moon.write("moon.yaml", moreOutputs)
        #expect(try gen() == "ran")
        #expect(try gen() == "up-to-date")
        try moon.write("in.txt", "b\n")
        #expect(try gen() == "ran")
    }

    /// A depfile that is missing or malformed after a success: a warning,
    /// and the node runs again next time (never counted as up to date).
    @Test func aMissingOrMalformedDepfileIsAWarningAndRunsAgain() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                sources: [in.txt]
                depfile: out.d
                run: |
                  if [ -f good ]; then echo "out: in.txt" > out.d; elif [ -f bad ]; then echo "no colon" > out.d; else rm -f out.d; fi
            """)
        try writeOld(moon, "in.txt", "a\n")
        var result = try moon.run(["run", "--json"])
        #expect(result.outcome("gen") == "ran")
        #expect(result.stderr.contains("warning") && result.stderr.contains("out.d cannot be read"), "\(result.stderr)")
        #expect(try moon.run(["status"]).stdout.contains("gen  runs: its depfile out.d was not read after its last success"))
        result = try moon.run(["run", "--json"])
        #expect(result.outcome("gen") == "ran")
        try moon.write("bad", "")
        result = try moon.run(["run", "--json"])
        #expect(result.stderr.contains("out.d is malformed (line 1"), "\(result.stderr)")
        result = try moon.run(["run", "--json"])
        #expect(result.outcome("gen") == "ran")
        try FileManager.default.removeItem(atPath: moon.path("bad"))
        try moon.write("good", "")
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "ran")
        result = try moon.run(["run", "--json"])
        #expect(result.outcome("gen") == "up-to-date", "\(result.stderr)")
        #expect(result.stderr.isEmpty)
    }

    // MARK: - moon status and moon run -n

    static let chain = """
        version: 1
        nodes:
          a.o:
            sources: [a.c]
            generates: [a.o]
            run: cp a.c a.o
          lib.a:
            needs: a.o
            sources: [a.o]
            generates: [lib.a]
            run: cat a.o > lib.a
          app:
            needs: lib.a
            sources: [lib.a]
            generates: [app]
            run: cp lib.a app
          other:
            sources: [other.c]
            run: "true"
        """

    /// Before the first run there is no store: `-n` lists every node, with
    /// or without sources, as one that will run, and leaves no store behind.
    @Test func aDryRunBeforeAnyRunSaysEveryNodeWillRun() throws {
        let moon = try Moon(graph: Self.chain)
        try moon.write("a.c", "a\n")
        try moon.write("other.c", "o\n")
        let dry = try moon.run(["run", "-n"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.hasPrefix("dry run: graph moon, 4 nodes in 3 levels: 4 will run\n"), "\(dry.stdout)")
        #expect(dry.stdout.contains("a.o    level 0  default  will run  cp a.c a.o"), "\(dry.stdout)")
        #expect(dry.stdout.contains("other  level 0  default  will run  true"), "\(dry.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path(".moon")))
        #expect(try moon.run(["run", "-n", "--force"]).stdout == dry.stdout)
    }

    /// B7 and B4: after an edit, `moon status` and `moon run -n` say what the
    /// run then does, down the whole chain; with nothing to do, `-n` says so.
    @Test func statusAndDryRunTellWhatTheRunDoes() throws {
        let moon = try Moon(graph: Self.chain)
        try moon.write("a.c", "a\n")
        try moon.write("other.c", "o\n")
        #expect(try moon.run(["run", "-q"]).status == 0)
        let noop = try moon.run(["run", "-n"])
        #expect(noop.stdout == "dry run: graph moon, nothing to do: all 4 nodes are up to date\n", "\(noop.stdout)")
        #expect(try moon.run(["run", "-n", "moon.yaml", "app"]).stdout.contains("nothing to do: all 3 nodes are up to date"))

        try moon.write("a.c", "a2\n")
        let status = try moon.run(["status"]).stdout
        #expect(status.contains("a.o    runs: a.c changed"), "\(status)")
        #expect(status.contains("lib.a  may run: 'a.o' runs and writes its sources (a.o)"), "\(status)")
        #expect(status.contains("app    may run: 'lib.a' may run and writes its sources (lib.a)"), "\(status)")
        #expect(status.contains("other  up to date"), "\(status)")
        let dry = try moon.run(["run", "-n"]).stdout
        #expect(dry.hasPrefix("dry run: graph moon, 4 nodes in 3 levels: 1 will run, 2 may run, 1 up to date\n"), "\(dry)")
        #expect(dry.contains("a.o    level 0  default  will run    cp a.c a.o"), "\(dry)")
        #expect(dry.contains("app    level 2  default  may run     cp lib.a app"), "\(dry)")
        #expect(dry.contains("other  level 0  default  up to date  true"), "\(dry)")
        let forced = try moon.run(["run", "-n", "-B"]).stdout
        #expect(forced.contains("4 will run"), "\(forced)")

        let result = try moon.run(["run", "--json"])
        #expect(["a.o", "lib.a", "app"].map { result.outcome($0) } == ["ran", "ran", "ran"])
        #expect(result.outcome("other") == "up-to-date")
    }
}
