import Foundation
import MoonEvents
import Testing

/// A run does only what it needs: a no-op writes nothing (no history row,
/// no store write, no `$MOON_OUTPUT` directory), and the output directory
/// is made only when a node's process starts. What a run that ran
/// something records stays as it was.
@Suite struct QuietRunTests {
    /// Tracked nodes (sources), a group over them and a node its condition
    /// skips: once built, a run finds nothing to do.
    static let graph = """
        version: 1
        nodes:
          gen: { sources: [in.txt], generates: [out.txt], run: "cp in.txt out.txt" }
          lint: { sources: [in.txt], run: "grep -q x in.txt" }
          all: { needs: [gen, lint] }
          never: { needs: [gen], if: failure, run: "touch never.ran" }
        """

    /// Bytes and modification time of each file below `.moon` (the SQLite
    /// shared-memory index aside: every reader maps it and moves its marks).
    static func snapshot(_ moon: Moon) throws -> [String: String] {
        let root = moon.path(".moon")
        var files: [String: String] = [:]
        let walk = FileManager.default.enumerator(atPath: root)
        while let name = walk?.nextObject() as? String {
            guard !name.hasSuffix("-shm") else { continue }
            var info = stat()
            guard lstat(root + "/" + name, &info) == 0 else { continue }
            let bytes = (info.st_mode & S_IFMT) == S_IFREG ? (FileManager.default.contents(atPath: root + "/" + name) ?? Data()) : Data()
            files[name] = "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(bytes.base64EncodedString())"
        }
        return files
    }

    /// A directory whose modification time is long past: making and
    /// removing anything in it moves that time.
    static func oldDirectory(_ moon: Moon, _ name: String) throws -> String {
        try moon.makeDirectory(name)
        let path = moon.path(name)
        #expect(shellStatus("touch -d 2001-01-01 '\(path)'") == 0)
        return path
    }

    static func modified(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mtim.tv_sec : -1
    }

    static func shellStatus(_ command: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// A no-op leaves `.moon` (the store, its WAL, the resume record, the
    /// node states' snapshot) byte for byte as it was, adds no history row
    /// and makes no `$MOON_OUTPUT` directory; the run that ran something
    /// before it is the history's last line. (The first no-op once the store
    /// settled writes the snapshot; the ones after it read it.)
    @Test func aNoOpWritesNothing() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "x\n")
        // Older than the stat cache's racy window: a no-op has nothing to re-hash.
        #expect(Self.shellStatus("touch -d 2001-01-01 '\(moon.path("in.txt"))'") == 0)
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.outcome("gen") == "ran" && first.outcome("lint") == "ran")
        #expect(Self.shellStatus("touch -d 2001-01-01 '\(moon.path("out.txt"))'") == 0)
        // A second run settles whatever the first left to settle, and a
        // no-op 100 ms after the store's last write keeps the snapshot.
        _ = try moon.run(["run", "-q"])
        #expect(eventually(10) {
            _ = try? moon.run(["run", "-q"])
            return FileManager.default.fileExists(atPath: moon.path(".moon/noop/moon.yaml"))
        })
        let history = try moon.run(["history"]).stdout
        let before = try Self.snapshot(moon)
        #expect(before["state.db"] != nil, "\(before.keys)")
        let temp = try Self.oldDirectory(moon, "tmp")
        // (The same selection each time: another one's resume record has other bytes.)
        for arguments in [["run", "--json"], ["run", "-q"], ["run", "--json", "-j", "1"], ["run", "--output", "plain", "-k"]] {
            let noop = try moon.run(arguments, environment: ["TMPDIR": temp])
            #expect(noop.status == 0, "\(arguments): \(noop.stderr)")
            #expect(noop.stderr.isEmpty, "\(arguments): \(noop.stderr)")
            if arguments[1] == "--json" {
                #expect(noop.outcome("gen") == "up-to-date" && noop.outcome("lint") == "up-to-date", "\(noop.stdout)")
                #expect(noop.outcome("never") == "condition", "\(noop.stdout)")
            }
            #expect(try Self.snapshot(moon) == before, "\(arguments) wrote below .moon")
            #expect(Self.modified(temp) == Self.modified(moon.path("in.txt")), "\(arguments) made an output directory")
        }
        #expect(!FileManager.default.fileExists(atPath: moon.path("never.ran")))
        #expect(try moon.run(["history"]).stdout == history)
        #expect(history.split(separator: "\n").count == 1, "\(history)")
        // Something to do again: recorded, as before.
        try moon.write("in.txt", "xx\n")
        let changed = try moon.run(["run", "-q"], environment: ["TMPDIR": temp])
        #expect(changed.status == 0, "\(changed.stderr)")
        let after = try moon.run(["history"]).stdout.split(separator: "\n")
        #expect(after.count == 2 && after.first?.contains("3 succeeded") == true, "\(after)")
    }

    /// A run of nodes without sources changes nothing in the store: its
    /// history is one line appended to `.moon/history.journal`, the store's
    /// files stay as they were, and the no-op snapshot stands, so the next
    /// run reads no SQLite. `moon history`, `moon trace` and `moon why` take
    /// the journal's runs in and show each run once.
    @Test func aRunOfNodesWithoutSourcesOnlyAppendsItsHistory() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  hello: { run: \"echo hello\" }\n  after: { needs: hello, run: \"true\" }\n")
        let stats = ["MOON_STATE_STATS": "1"]
        #expect(try moon.run(["run", "-q"]).status == 0)
        // Once the store's files settled, a run keeps the snapshot, and the ones after it read it.
        #expect(eventually(10) { (try? moon.run(["run", "-q"], environment: stats))?.stderr.contains("from the no-op snapshot") == true })
        let journal = moon.path(".moon/history.journal")
        let store = try Self.snapshot(moon).filter { $0.key.hasPrefix("state.db") || $0.key.hasPrefix("noop") }
        for _ in 0..<3 {
            let run = try moon.run(["run", "-q"], environment: stats)
            #expect(run.status == 0 && run.stderr.contains("from the no-op snapshot"), "\(run.stderr)")
        }
        #expect(try Self.snapshot(moon).filter { $0.key.hasPrefix("state.db") || $0.key.hasPrefix("noop") } == store, "the store was written")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: journal)))?.isEmpty == false)

        let history = try moon.run(["history", "-n", "1000"])
        let lines = history.stdout.split(separator: "\n")
        #expect(history.status == 0 && lines.count >= 5, "\(history.stdout)")
        #expect(Set(lines.map { $0.split(separator: " ")[0] }).count == lines.count, "a run shown twice: \(history.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)).isEmpty)
        #expect(try moon.run(["history", "-n", "1000"]).stdout == history.stdout)
        let trace = try moon.run(["trace", "-o", "trace.json"])
        #expect(trace.status == 0, "\(trace.stderr)")
        // The next run records again, in the journal.
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(try moon.run(["history", "-n", "1000"]).stdout.split(separator: "\n").count == lines.count + 1)
    }

    /// A run restored from the output cache did something: it is recorded.
    @Test func aRunRestoredFromTheCacheIsRecorded() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  gen: { sources: [in.txt], generates: [out.txt], run: \"cp in.txt out.txt\" }\n")
        try moon.write("in.txt", "x\n")
        #expect(try moon.run(["run", "-q"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("out.txt"))
        let restored = try moon.run(["run", "--json"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.outcome("gen") == "cache-hit", "\(restored.stdout)")
        #expect(moon.read("out.txt") == "x\n")
        let history = try moon.run(["history"]).stdout.split(separator: "\n")
        #expect(history.count == 2, "\(history)")
    }

    /// The output directory is made when a node's process starts: a run
    /// of built-ins only makes none; a process that writes `$MOON_OUTPUT`
    /// finds its directory (and a retry the same one), removed after.
    @Test func theOutputDirectoryIsMadeOnlyForAProcess() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              w: { uses: write-file, with: { path: w.txt, content: "w" } }
            """)
        let temp = try Self.oldDirectory(moon, "tmp")
        let old = Self.modified(temp)
        let builtins = try moon.run(["run", "--json"], environment: ["TMPDIR": temp])
        #expect(builtins.status == 0, "\(builtins.stderr)")
        #expect(moon.read("w.txt") == "w")
        #expect(Self.modified(temp) == old, "a run of built-ins made an output directory")
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              a:
                retry: 1
                run: |
                  echo "dir=$(dirname "$MOON_OUTPUT")" >> "$MOON_OUTPUT"
                  test "$MOON_ATTEMPT" = 2
              b: { needs: a, run: "echo got ${{ needs.a.outputs.dir }}" }
            """)
        let processes = try moon.run(["run", "--json"], environment: ["TMPDIR": temp])
        #expect(processes.status == 0, "\(processes.stderr)")
        let dir = try #require(processes.events("complete", node: "a").first?.outputs?["dir"])
        #expect(dir.hasPrefix(temp + "/moon-"), "\(dir)")
        #expect(processes.printed("b") == ["got \(dir)"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp).isEmpty)
        #expect(Self.modified(temp) != old)
    }

    /// While a node runs, moon holds no inotify instance (it looks a node's
    /// `$MOON_OUTPUT` file up when the node ends). `ls` may meet a descriptor
    /// another thread of moon closes meanwhile: that is not a failure.
    @Test func aRunHoldsNoInotifyInstance() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              look: { run: "ls -l /proc/$PPID/fd > fds.txt 2>/dev/null || true; echo v=1 >> \\"$MOON_OUTPUT\\"" }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let fds = try #require(moon.read("fds.txt"))
        #expect(!fds.isEmpty && !fds.contains("inotify"), "\(fds)")
        #expect(result.events("complete", node: "look").first?.outputs?["v"] == "1", "\(result.stdout)")
    }

    /// A run whose nodes were all resumed ran nothing: not recorded, and
    /// the record it resumed from stays, so the next `--resume` resumes again.
    @Test func aRunThatOnlyResumedKeepsTheRecord() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "echo a >> a.log" }
              b: { needs: a, run: "test -f ok && echo b >> b.log" }
            """)
        #expect(try moon.run(["run", "-q"]).status == 1)
        try moon.write("ok", "")
        let resumed = try moon.run(["run", "--json", "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.outcome("a") == "resumed" && resumed.outcome("b") == "ran", "\(resumed.stdout)")
        let history = try moon.run(["history"]).stdout
        #expect(history.split(separator: "\n").count == 2, "\(history)")
        for _ in 0..<2 {
            let again = try moon.run(["run", "--json", "--resume"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.outcome("a") == "resumed" && again.outcome("b") == "resumed", "\(again.stdout)")
        }
        #expect(try moon.run(["history"]).stdout == history)
        #expect(moon.read("a.log") == "a\n" && moon.read("b.log") == "b\n")
    }
}
