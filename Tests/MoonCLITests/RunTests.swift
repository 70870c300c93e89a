import Foundation
import MoonEvents
import Testing

/// `moon run` end to end: the built binary, real graphs, real processes.
@Suite struct RunTests {
    @Test func theQuickstartEndsWithTheCombinedValue() throws {
        let moon = try Moon()
        let result = try moon.run(["run", "--json", Moon.root.appendingPathComponent("examples/quickstart.yaml").path])
        #expect(result.status == 0)
        let final = result.events("next", node: "final")
        #expect(final.first?.text == "5")
        #expect(final.first?.stream == .value)
        let done = result.events("graph-complete").first
        #expect(done?.ok == true)
        #expect(done?.counts?.succeeded == 7)
    }

    /// `concurrency: auto` is the number of CPUs moon may use: those of its
    /// affinity mask (`taskset`, cpusets), as `nproc` and ninja count them,
    /// capped by a cgroup CPU quota.
    // Without taskset the test shows as skipped, not as passed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), "needs taskset (util-linux)"))
    func autoConcurrencyCountsTheCPUsMoonMayUse() throws {
        let taskset = "/usr/bin/taskset"
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "true" }
            """)
        /// The default queue's width in `graph-start`, moon started through `prefix`.
        func defaultWidth(under prefix: [String] = []) throws -> Int? {
            let command = prefix + [Moon.binary, "run", "--json", "-q"]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.currentDirectoryURL = moon.directory
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Moon.events(in: String(decoding: data, as: UTF8.self)).first?.event.queues?["default"]
        }
        // Unrestricted: the CPUs of the affinity mask (nproc), capped by a
        // quota as Foundation caps the online CPUs; whichever is lower.
        let nproc = Process()
        nproc.executableURL = URL(fileURLWithPath: "/usr/bin/nproc")
        let count = Pipe()
        nproc.standardOutput = count
        try nproc.run()
        let nprocText = String(decoding: count.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        nproc.waitUntilExit()
        let allowed = try #require(Int(nprocText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try defaultWidth() == min(allowed, ProcessInfo.processInfo.activeProcessorCount))
        #expect(try defaultWidth(under: [taskset, "-c", "0"]) == 1, "one CPU allowed: one node at a time")
    }

    @Test func jsonStdoutCarriesOnlyEventsInSequence() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "echo out; echo err >&2" }
              b: { needs: a, run: [echo, hi] }
            """)
        let result = try moon.run(["run", "--json"])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == result.events.count, "every stdout line is a JSON event")
        #expect(Moon.events(in: result.stdout).map(\.seq) == Array(1...lines.count))
        // The wire form of `ts`, which the typed event holds as a date: read from the raw lines on purpose.
        for line in lines {
            let ts = line.firstRange(of: #""ts":""#).map { line[$0.upperBound...].prefix(while: { $0 != "\"" }) } ?? ""
            #expect(ts.hasSuffix("Z") && ts.count == 24, "RFC 3339 UTC with milliseconds: \(ts)")
        }
        #expect(result.events("next", node: "a").compactMap { $0.stream?.rawValue }.sorted() == ["stderr", "stdout"])
        #expect(result.events.first?.name == "graph-start")
        #expect(result.events.last?.name == "graph-complete")
    }

    @Test func aFailedNodeExitsWithOneAndSkipsItsDependents() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              bad: { run: exit 3 }
              after: { needs: bad, run: echo never }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1)
        let error = result.events("error", node: "bad").first?.error
        #expect(error?.kind == .exit)
        #expect(error?.exitCode == 3)
        #expect(result.events("skip", node: "after").first?.reason == .upstreamFailed)
    }

    @Test func theExamplesBehaveAsTheirCommentsSay() throws {
        let moon = try Moon()
        let examples = Moon.root.appendingPathComponent("examples")
        let fails = try moon.run(["run", "--json", examples.appendingPathComponent("fails.yaml").path])
        #expect(fails.status == 1)
        #expect(fails.events("complete", node: "report").count == 1, "if: always still runs")
        #expect(fails.events("skip", node: "deploy").count == 1)
        let queues = try moon.run(["run", "-q", examples.appendingPathComponent("queues.yaml").path])
        #expect(queues.status == 0)
    }

    @Test func shellAndExecFormsAndTheEnvironment() throws {
        let moon = try Moon(graph: """
            version: 1
            env: { GREETING: hello, SHARED: file }
            nodes:
              shell:
                run: echo "$GREETING $SHARED $MOON_NODE $MOON_ATTEMPT"
                env: { SHARED: node }
              exec:
                run: [printf, "%s|", "a b", "$GREETING"]
              where:
                dir: sub
                run: pwd; echo "$MOON_GRAPH_DIR"
              stdin:
                run: cat; echo "stdin closed"
            """)
        try moon.makeDirectory("sub")
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        func text(_ node: String) -> [String] { result.events("next", node: node).compactMap { $0.text } }
        #expect(text("shell") == ["hello node shell 1"])
        #expect(text("exec") == ["a b|$GREETING|"], "exec form: no shell, no expansion")
        let real = URL(fileURLWithPath: moon.directory.path).resolvingSymlinksInPath().path
        #expect(text("where").first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } == real + "/sub")
        #expect(text("stdin") == ["stdin closed"], "stdin is /dev/null")
    }

    /// A node without `dir` runs in the graph file's directory, whether
    /// moon runs there (the node then inherits moon's: no `chdir`) or
    /// elsewhere.
    @Test func aNodeRunsInTheGraphsDirectoryFromAnywhere() throws {
        let moon = try Moon()
        try moon.makeDirectory("graphs")
        try moon.write("graphs/g.yaml", "version: 1\nnodes:\n  here: { run: pwd }\n")
        let real = URL(fileURLWithPath: moon.path("graphs")).resolvingSymlinksInPath().path
        for (arguments, directory) in [(["run", "--json", "graphs/g.yaml"], nil), (["run", "--json", "g.yaml"], "graphs")] {
            let result = try moon.run(arguments, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
            let printed = result.events("next", node: "here").first?.text
            #expect(printed.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } == real, "\(arguments)")
        }
    }

    /// moon keeps SIGCHLD blocked in its threads (it hears of exits through
    /// pidfds, and a blocked SIGCHLD wakes no sleeping thread); a node starts
    /// with nothing blocked and SIGCHLD at its default, so its own children
    /// are waited for as usual. (The moon under test runs as a node of
    /// another: it then starts with an empty mask, as a user's moon does,
    /// not with whatever the test runner's threads block.)
    @Test func nodesStartWithAnEmptySignalMaskWhileMoonBlocksSigchld() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              inner: { run: [\(Moon.binary), run, --json, inner.yaml] }
            """)
        try moon.write("inner.yaml", """
            version: 1
            nodes:
              mask: { run: "grep -E '^Sig(Blk|Ign)' /proc/self/status; grep '^SigBlk' /proc/$PPID/status | sed 's/^/moon /'" }
              child: { run: "sleep 0.1 & wait $!; echo waited $?" }
            """)
        let outer = try moon.run(["run", "--json"])
        #expect(outer.status == 0, "\(outer.stderr)")
        // The inner moon's events, as the outer one's `next` lines.
        let stdout = outer.events("next", node: "inner").compactMap { $0.text }.joined(separator: "\n")
        let result = Moon.Result(stdout: stdout, stderr: "", status: 0)
        let lines = result.events("next", node: "mask").compactMap { $0.text }
        func mask(_ prefix: String) -> UInt64? {
            lines.first { $0.hasPrefix(prefix) }.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        }
        #expect(mask("SigBlk:") == 0, "\(lines)")
        #expect(mask("SigIgn:") == 0, "nothing moon ignores stays ignored: \(lines)")
        let sigchld = UInt64(1) << (UInt64(SIGCHLD) - 1)
        #expect((mask("moon SigBlk:") ?? 0) & sigchld != 0, "\(lines)")
        #expect(result.events("next", node: "child").first?.text == "waited 0")
    }

    @Test func bashShellUsesPipefail() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults: { shell: bash }
            nodes:
              pipe: { run: "false | cat" }
            """)
        #expect(try moon.run(["run", "-q"]).status == 1)
    }

    /// Into a pipe, the plain log has colour only when asked for: `--color
    /// always` (which beats `NO_COLOR`) or `FORCE_COLOR`; `NO_COLOR` beats
    /// `FORCE_COLOR`; by default none. Never a cursor movement.
    @Test func colourInAPipeOnlyWhenAskedFor() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              hello: { run: "echo hello" }
            """)
        let escape = "\u{1B}["
        let asked = try moon.run(["run", "--color", "always"])
        #expect(asked.status == 0)
        #expect(asked.stdout.contains("\u{1B}[\(Self.nodeColour("hello"))mhello │ \u{1B}[0mhello\n"))
        #expect(asked.stdout.contains("\u{1B}[32m✓ \u{1B}[0m"))
        #expect(!asked.stdout.contains("\u{1B}[2K") && !asked.stdout.contains("\r"))
        let forced = try moon.run(["run"], environment: ["NO_COLOR": "", "FORCE_COLOR": "1"])
        #expect(forced.stdout.contains(escape))
        let both = try moon.run(["run"], environment: ["NO_COLOR": "1", "FORCE_COLOR": "1"])
        #expect(!both.stdout.contains(escape))
        let plain = try moon.run(["run"], environment: ["NO_COLOR": "", "FORCE_COLOR": "", "CLICOLOR_FORCE": ""])
        #expect(!plain.stdout.contains(escape))
        #expect(plain.stdout.contains("hello │ hello\n"))
    }

    /// The SGR parameters of a node's colour: FNV-1a of its name into the
    /// reporters' palette (a user sees the same colour for a node in every run).
    static func nodeColour(_ name: String) -> String {
        let palette = ["36", "35", "34", "33", "32", "96", "95", "94", "93", "92"]
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }

    @Test func everyBuiltinWorks() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              nap: { uses: sleep, with: { duration: 50ms } }
              a: { uses: echo, with: { message: "2" } }
              b: { uses: echo, with: { message: "3" } }
              sum: { needs: [a, b], uses: reduce, with: { op: sum } }
              cat: { needs: [a, b], uses: reduce, with: { op: concat } }
              list: { needs: [a, b], uses: reduce, with: { op: list } }
              write: { uses: write-file, with: { path: out/hello.txt, content: "hi there" } }
              check: { needs: write, uses: exists, with: { path: out/hello.txt } }
              wait: { needs: write, uses: wait-for, with: { path: out/hello.txt, timeout: 2s } }
            """)
        // `out/` does not exist: write-file makes it.
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        func value(_ node: String) -> String? { result.events("next", node: node).first?.text }
        #expect(value("sum") == "5")
        #expect(value("cat") == "23")
        #expect(value("list") == #"["2","3"]"#)
        #expect(moon.read("out/hello.txt") == "hi there")
        #expect(result.events("complete").count == 9)
    }

    @Test func builtinFailuresAreErrorsOfKindBuiltin() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              boom: { uses: fail, with: { message: "on purpose" } }
              missing: { uses: exists, with: { path: nope.txt } }
              never: { uses: wait-for, with: { tcp: "127.0.0.1:1", timeout: 300ms } }
              folder: { uses: write-file, with: { path: out/, content: x } }
              under: { uses: write-file, with: { path: afile/x.txt, content: x } }
            """)
        try moon.write("afile", "a file")
        let result = try moon.run(["run", "--json", "-k"])
        #expect(result.status == 1)
        func message(_ node: String) -> String? {
            result.events("error", node: node).first?.error?.message
        }
        for node in ["boom", "missing", "never", "folder", "under"] {
            let error = result.events("error", node: node).first?.error
            #expect(error?.kind == .builtin, "\(node)")
        }
        #expect(message("boom")?.contains("on purpose") == true)
        // write-file says what is wrong with the path, and writes nothing.
        #expect(message("folder")?.hasSuffix("out/: it names a directory; give the name of the file to write") == true)
        #expect(message("under")?.hasSuffix("afile is a file, not a directory") == true)
        #expect(moon.read("out") == nil && moon.read("afile") == "a file")
    }

    @Test func aMissingProgramIsASpawnError() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              ghost: { run: [no-such-program-moon] }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1)
        let error = result.events("error", node: "ghost").first?.error
        #expect(error?.kind == .spawn)
        #expect(error?.message.contains("no-such-program-moon") == true)
    }

    @Test func selectedTargetsRunWithTheirNeedsOnly() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "true" }
              b: { needs: a, run: "true" }
              c: { run: "true" }
            """)
        let result = try moon.run(["run", "--json", "moon.yaml", "b"])
        #expect(result.status == 0)
        #expect(Set(result.events("start").compactMap { $0.node }) == ["a", "b"])
        let unknown = try moon.run(["run", "moon.yaml", "bb"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("did you mean 'b'"))
    }

    @Test func retriesAndTimeoutsFromTheFile() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              flaky:
                run: 'n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; [ "$n" -ge 2 ]'
                retry: { times: 3, delay: 10ms, backoff: 2 }
              hang:
                run: sleep 30
                timeout: 200ms
                continue-on-error: true
            """)
        let result = try moon.run(["run", "--json"], limit: 20)
        #expect(result.status == 0)
        let retries = result.events("retry", node: "flaky")
        #expect(retries.map { $0.delayMilliseconds } == [10, 20])
        #expect(result.events("start", node: "flaky").map { $0.attempt } == [1, 2, 3])
        let error = result.events("error", node: "hang").first?.error
        #expect(error?.kind == .timeout)
    }

    @Test func aQueueOfOneRunsItsNodesOneAtATime() throws {
        let moon = try Moon(graph: """
            version: 1
            queues: { db: { concurrency: 1 } }
            nodes:
              a: { queue: db, run: "mkdir lock && sleep 0.1 && rmdir lock" }
              b: { queue: db, run: "mkdir lock && sleep 0.1 && rmdir lock" }
              c: { queue: db, run: "mkdir lock && sleep 0.1 && rmdir lock" }
            """)
        let result = try moon.run(["run", "--json", "-j", "8"])
        #expect(result.status == 0, "the three never overlapped")
    }

    @Test func theRunTimeoutStopsEverything() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              long: { run: sleep 30 }
            """)
        let result = try moon.run(["run", "--json", "--timeout", "300ms"], limit: 20)
        #expect(result.status == 1)
        let error = result.events("error", node: "long").first?.error
        #expect(error?.kind == .canceled)
    }

    @Test func badCommandLinesExitWithTwo() throws {
        let moon = try Moon(graph: "version: 1\nnodes: { a: { run: 'true' } }\n")
        #expect(try moon.run(["run", "--jobs", "0"]).status == 2)
        #expect(try moon.run(["run", "--grace", "soon"]).status == 2)
        #expect(try moon.run(["run", "--no-such-flag"]).status == 2)
        #expect(try moon.run(["run", "missing.yaml"]).status == 2)
        #expect(try moon.run(["run", "--set", "novalue"]).status == 2)
        // A dry run has no events: with --json its text plan would be on the
        // stream's stdout. Refused, nothing on stdout, the way to JSON named.
        for arguments in [["run", "-n", "--json"], ["run", "--dry-run", "--output", "json", "a"], ["run", "-n", "--output=json"]] {
            let refused = try moon.run(arguments)
            #expect(refused.status == 2, "\(arguments)")
            #expect(refused.stdout.isEmpty, "\(arguments)")
            #expect(refused.stderr.contains("moon graph --format json"), "\(arguments)")
        }
    }

    @Test func withoutAFileMoonUsesMoonYamlHere() throws {
        let moon = try Moon(graph: "version: 1\nnodes: { hello: { run: echo hi } }\n")
        let result = try moon.run(["run"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("hello │ hi"))
        let empty = try Moon()
        let none = try empty.run(["run"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no moon.yaml"))
    }
}

/// Every byte a node writes reaches the events, as lines.
@Suite struct OutputTests {
    @Test func aLastLineWithoutNewlineAndInvalidUTF8AreDelivered() throws {
        let moon = try Moon(graph: #"""
            version: 1
            nodes:
              bytes: { run: "printf 'ok\\n\\377bad\\nlast'" }
            """#)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0)
        let lines = result.events("next", node: "bytes").compactMap { $0.text }
        #expect(lines == ["ok", "\u{FFFD}bad", "last"])
    }

    @Test func linesOfParallelNodesAreNeverTorn() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "i=0; while [ $i -lt 2000 ]; do echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-$i; i=$((i+1)); done" }
              b: { run: "i=0; while [ $i -lt 2000 ]; do echo bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-$i; i=$((i+1)); done" }
            """)
        let result = try moon.run(["run", "--json", "-j", "2"])
        #expect(result.status == 0)
        for node in ["a", "b"] {
            let texts = result.events("next", node: node).compactMap { $0.text }
            let prefix = String(repeating: node, count: 40) + "-"
            #expect(texts == (0..<2000).map { prefix + String($0) })
        }
        let plain = try moon.run(["run", "-j", "2"])
        let attributed = plain.stdout.split(separator: "\n").filter { $0.contains(" │ ") }
        #expect(attributed.count == 4000)
        #expect(attributed.allSatisfy { $0.hasPrefix("a │ aaaa") || $0.hasPrefix("b │ bbbb") })
    }
}
