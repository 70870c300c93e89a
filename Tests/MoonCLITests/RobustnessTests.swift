import Foundation
import MoonEvents
import Testing

/// Issue 8: moon under pressure — floods of output, broken pipes, moon
/// itself killed, descriptor exhaustion and the errors of the world. Every
/// test runs the real binary; docs/promises.md names the test behind each
/// promise.
/// Over 400 lines: one test per kind of pressure, each a whole scenario.
@Suite(.serialized) struct RobustnessTests {
    // MARK: Output integrity

    /// 5 nodes × 80,000 lines: every line reaches `--json` exactly once,
    /// untorn, in order per node, and every stdout line is one JSON event.
    @Test func fourHundredThousandLinesExactlyOnce() throws {
        var graph = "version: 1\nnodes:\n"
        for n in 0..<5 { graph += "  w\(n):\n    run: seq -f 'w\(n)-%06g' 1 80000\n" }
        let moon = try Moon(graph: graph)
        let result = try moon.run(["run", "--json", "-j", "5"], limit: 120)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        // A torn line is no event: the counts differ (or the decoder fails the test).
        let events = result.events
        #expect(events.count == lines.count, "every stdout line is one whole event")
        var next = Array(repeating: 1, count: 5)
        for event in events {
            guard let node = event.node, let text = event.text, let n = Int(node.dropFirst()) else { continue }
            #expect(text == String(format: "w%d-%06d", n, next[n]))
            next[n] += 1
        }
        #expect(next == Array(repeating: 80001, count: 5))
    }

    /// A node that writes far faster than moon can report is slowed down
    /// (backpressure to its pipe) instead of moon's memory growing: without
    /// it, 1.5 million lines of `yes` made moon grow past 100 MB.
    @Test func aFloodFasterThanTheReporterKeepsMemoryBounded() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              flood: { run: "yes | head -n 1500000" }
            """)
        let running = try moon.start(["run", "--json"])
        var peak = 0
        while running.process.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(running.pid)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
               let kb = Int(line.split(separator: " ").dropFirst().first ?? "") {
                peak = max(peak, kb)
            }
            usleep(20_000)
        }
        let result = try running.wait(limit: 300)
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 1_500_004, "every line, plus graph-start, start, complete, graph-complete")
        #expect(peak > 0 && peak < 70_000, "peak RSS \(peak) KB")
    }

    /// A 10 MB line without a newline arrives in parts of at most 1 MiB,
    /// all but the last marked `continued`, with every byte.
    @Test func aTenMegabyteLineArrivesInMebibyteParts() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              big:
                run: head -c 10000000 /dev/zero | tr '\\000' x
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0)
        let parts = result.events("next", node: "big")
        #expect(parts.count == 10)
        let sizes = parts.map { $0.text?.utf8.count ?? -1 }
        #expect(sizes.allSatisfy { $0 <= 1 << 20 })
        #expect(sizes.reduce(0, +) == 10_000_000)
        #expect(parts.dropLast().allSatisfy { $0.continued == true })
        #expect(parts.last?.continued == false)
        #expect(parts.allSatisfy { $0.text?.allSatisfy { $0 == "x" } == true })
    }

    /// Bytes that are not UTF-8 are replaced by U+FFFD, never dropped; the
    /// rest of the line and the next lines arrive unchanged.
    @Test func invalidUTF8IsReplacedNotDropped() throws {
        let moon = try Moon(graph: #"""
            version: 1
            nodes:
              bytes:
                run: printf 'a\377b\300\n\342\202\n\303\251t\351\n' ; printf 'end\n' >&2
            """#)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0)
        let texts = result.events("next", node: "bytes").compactMap { $0.text }
        #expect(texts == ["a\u{FFFD}b\u{FFFD}", "\u{FFFD}", "ét\u{FFFD}", "end"])
    }

    // MARK: Broken pipes

    /// `moon run --json | grep -m1 ready` (like `| head -1`) ends promptly
    /// although the nodes then stay silent, cancels them (background jobs
    /// included) and leaves nothing running; moon exits 141.
    @Test func headOneEndsPromptlyAndLeavesNothing() throws {
        let moon = try Moon(graph: """
            version: 1
            queues: { default: { concurrency: 2 } }
            nodes:
              a:
                run: echo $$ > a.pid; sleep 301 & echo $! > a2.pid; echo ready; wait
              b:
                run: echo $$ > b.pid; exec sleep 300
              c:
                needs: [a]
                run: "true"
            """)
        let began = Date()
        // `grep -m1` quits at a's first output line (not at its `start`
        // event, whose command also says "ready"): a is running by then and
        // has written its pid files. A reader of the raw lines that closes
        // the pipe is the point here, so no decoder stands between.
        let result = try shell(#""$MOON" run --json | grep -m1 '"text":"ready"'; echo "status=${PIPESTATUS[0]}""#, in: moon, bash: true)
        #expect(Date().timeIntervalSince(began) < 10)
        #expect(result.stdout.hasPrefix(#"{"v":1,"#))
        #expect(result.stdout.contains("status=141"))
        var checked = 0
        for file in ["a.pid", "a2.pid", "b.pid"] {
            guard let pid = moon.read(file).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else { continue }
            checked += 1
            #expect(eventually(5) { !isAlive(pid, of: moon) }, "\(file) still runs")
        }
        #expect(checked >= 2)
    }

    /// stdout that cannot be written but whose reader is there (a full
    /// disk, `/dev/full`): the text is lost, nothing else. Every node runs
    /// to its end, the history says the run succeeded, and moon exits 1
    /// with one message on stderr. Only a reader that went away (EPIPE) stops a run.
    static let fullStdoutGraph = """
        version: 1
        nodes:
          slow: { run: "sleep 1; touch slow.done" }
          fast: { run: "echo x; touch fast.done" }
          after: { needs: [slow, fast], run: "echo after; touch after.done" }
        """

    static func expectEveryNodeRan(_ moon: Moon, _ result: Moon.Result, _ words: String) throws {
        #expect(result.status == 1, "\(words): \(result.stderr)")
        #expect(result.stderr.contains("cannot write to standard output"), "\(words): \(result.stderr)")
        for marker in ["slow.done", "fast.done", "after.done"] {
            #expect(FileManager.default.fileExists(atPath: moon.path(marker)), "\(words): \(marker) missing")
            try? FileManager.default.removeItem(atPath: moon.path(marker))
        }
        let history = try moon.run(["history"]).stdout
        let last = history.split(separator: "\n").first.map(String.init) ?? ""
        #expect(last.contains("ok") && last.contains("3 succeeded") && !last.contains("interrupted"), "\(words): \(history)")
    }

    @Test(arguments: ["run", "run --json", "run -v --output plain", "run --output tty"])
    func aFullStdoutNeverStopsARun(_ words: String) throws {
        let moon = try Moon(graph: Self.fullStdoutGraph)
        let result = try shell("\"$MOON\" \(words) --force > /dev/full", in: moon)
        try Self.expectEveryNodeRan(moon, result, words)
    }

    /// The same on a real full disk: a 64 KiB tmpfs (root, to mount it) filled before the run.
    @Test(.enabled(if: getuid() == 0)) func stdoutOnAFullDiskNeverStopsARun() throws {
        let moon = try Moon(graph: Self.fullStdoutGraph)
        try moon.makeDirectory("small")
        let mounted = try shell("mount -t tmpfs -o size=64k moon-test-tmpfs small", in: moon)
        try #require(mounted.status == 0, "cannot mount a tmpfs: \(mounted.stderr)")
        defer { _ = try? shell("umount small", in: moon) }
        let result = try shell("head -c 1M /dev/zero > small/fill 2>/dev/null; \"$MOON\" run --json > small/log.jsonl", in: moon)
        try Self.expectEveryNodeRan(moon, result, "run --json > small/log.jsonl")
    }

    /// Under a file-size limit (`ulimit -f`) moon's writes of its store or
    /// cache fail with EFBIG instead of SIGXFSZ killing moon: the run ends
    /// with its own exit code and a warning; a limit the store fits in
    /// keeps the history. Nodes still get SIGXFSZ's default action.
    @Test func aFileSizeLimitNeverKillsMoon() throws {
        let moon = try Moon(graph: """
            version: 1
            cache: { dir: .c }
            nodes:
              big: { sources: [in.txt], generates: [o.bin], run: "mv big.tmp o.bin; touch big.done" }
              n: { run: "touch n.done" }
            """)
        try moon.write("in.txt", "in\n")
        // A 16 KiB limit: too small even for the store.
        let tiny = try shell("head -c 4M /dev/zero > big.tmp; ulimit -f 16; \"$MOON\" run", in: moon, bash: true)
        #expect(tiny.status == 0, "\(tiny.stderr)")
        #expect(tiny.stderr.contains("warning"), "\(tiny.stderr)")
        #expect(FileManager.default.fileExists(atPath: moon.path("n.done")))
        // A 1 MiB limit: the store fits, the 4 MiB output does not fit in the cache.
        _ = try shell("rm -rf .moon .c o.bin; head -c 4M /dev/zero > big.tmp", in: moon)
        let limited = try shell("ulimit -f 1024; \"$MOON\" run", in: moon, bash: true)
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stderr.contains("cannot store node 'big' in the cache") && limited.stderr.contains("too large"), "\(limited.stderr)")
        let history = try moon.run(["history"]).stdout
        #expect(history.contains("2 succeeded"), "\(history)")
    }

    @Test func aNodeStillGetsSIGXFSZ() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              w: { run: "ulimit -f 1; head -c 10000 /dev/zero > f; touch not-reached" }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1)
        let error = result.events("error", node: "w").first?.error
        // `head` dies of SIGXFSZ's default action, so the shell exits 128 + SIGXFSZ.
        #expect(error?.exitCode == 128 + SIGXFSZ, "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("not-reached")))
    }

    // MARK: Nothing left behind

    /// moon killed with SIGKILL (no code of moon runs): its nodes' process
    /// groups die too, background jobs included.
    @Test func sigkilledMoonTakesItsNodesAlong() throws {
        let moon = try Moon(graph: """
            version: 1
            queues: { default: { concurrency: 3 } }
            nodes:
              a:
                run: echo $$ > a.pid; exec sleep 300
              b:
                run: sleep 301 & echo $! > b.pid; wait
              c:
                run: [sh, -c, 'echo $$ > c.pid; exec sleep 302']
            """)
        let running = try moon.start(["run", "--json", "-j", "3"])
        let files = ["a.pid", "b.pid", "c.pid"]
        #expect(eventually(10) { files.allSatisfy { moon.read($0)?.hasSuffix("\n") == true } })
        let pids = files.compactMap { moon.read($0).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } }
        #expect(pids.count == 3)
        #expect(pids.allSatisfy { isAlive($0, of: moon) })
        running.signal(SIGKILL)
        _ = try running.wait(limit: 10)
        for pid in pids { #expect(eventually(5) { !isAlive(pid, of: moon) }, "pid \(pid) outlived moon") }
    }

    /// A node's processes see only stdin, stdout and stderr: no descriptor
    /// of moon leaks into them.
    @Test func childrenInheritOnlyTheThreeStandardDescriptors() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fds:
                run: ls /proc/$$/fd
              more:
                run: [ls, /proc/self/fd]
            """)
        let result = try moon.run(["run", "--json", "-j", "2"])
        #expect(result.status == 0)
        let shellFds = result.events("next", node: "fds").compactMap { $0.text }
        #expect(shellFds == ["0", "1", "2"])
        // ls's own list includes the descriptor it reads the directory with.
        let lsFds = result.events("next", node: "more").compactMap { $0.text }
        #expect(lsFds == ["0", "1", "2", "3"])
    }

    /// Under load, with nodes leaving orphans behind, moon reaps them all:
    /// a last node finds no zombie among moon's children.
    @Test func zombiesAreReapedUnderLoad() throws {
        var graph = "version: 1\nnodes:\n"
        for n in 0..<200 { graph += "  n\(n):\n    run: (sleep 0.01 &) ; true\n" }
        graph += """
              check:
                needs: [\((0..<200).map { "n\($0)" }.joined(separator: ", "))]
                run: |
                  sleep 0.5
                  moon=$PPID
                  z=0
                  for s in /proc/[0-9]*/stat; do
                    set -- $(cat "$s" 2>/dev/null | sed 's/.*) //')
                    [ "$1" = Z ] && [ "$2" = "$moon" ] && z=$((z+1))
                  done
                  echo "zombies=$z"

            """
        let moon = try Moon(graph: graph)
        let result = try moon.run(["run", "--json", "-j", "16"], limit: 120)
        #expect(result.status == 0)
        let texts = result.events("next", node: "check").compactMap { $0.text }
        #expect(texts == ["zombies=0"])
    }

    // MARK: Load

    /// 5,000 nodes, each a process, `-j 200`, under `ulimit -n 256`: moon
    /// waits for descriptors instead of failing, and the run succeeds.
    @Test func fiveThousandNodesUnderADescriptorLimit() throws {
        var graph = "version: 1\nnodes:\n"
        for n in 0..<5000 { graph += "  n\(n):\n    run: [\"true\"]\n" }
        let moon = try Moon(graph: graph)
        let result = try shell(#"ulimit -n 256 && exec "$MOON" run --json -j 200"#, in: moon, limit: 300)
        #expect(result.status == 0, "\(result.stderr.prefix(500))")
        #expect(result.events("complete").count == 5000)
        #expect(!result.events("error").contains { $0.error?.kind == .spawn })
        #expect(result.events("graph-complete").first?.ok == true)
    }

    // MARK: Errors of the world

    /// Each failure of the world is a clear `error` event of kind `spawn` or
    /// `builtin`, and the rest of the graph follows the failure rules.
    @Test func errorsOfTheWorldAreClearErrorEvents() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              missing:
                run: [no-such-program-moon-test, --flag]
              not-executable:
                run: [./script.sh]
              no-dir:
                run: "true"
                dir: does/not/exist
              no-shell:
                shell: bash
                env: { PATH: /nonexistent-moon }
                run: echo hi
              after-missing:
                needs: [missing]
                run: echo never
              cleanup:
                needs: [missing]
                if: failure
                run: echo cleaned
              independent:
                run: echo ok
            """)
        try moon.write("script.sh", "#!/bin/sh\necho hi\n")
        let result = try moon.run(["run", "--json", "-k", "-j", "1"])
        #expect(result.status == 1)
        func error(_ node: String) -> NodeError? {
            result.events("error", node: node).first?.error
        }
        let expected: [(String, String)] = [
            ("missing", "cannot run 'no-such-program-moon-test': program not found in PATH"),
            ("not-executable", "cannot run './script.sh': "),
            ("no-dir", "working directory '"),
            ("no-shell", "cannot run 'bash': program not found in PATH (/nonexistent-moon)"),
        ]
        for (node, message) in expected {
            #expect(error(node)?.kind == .spawn, "\(node)")
            #expect(error(node)?.message.contains(message) == true, "\(node): \(String(describing: error(node)))")
        }
        #expect(error("not-executable")?.message.contains("not executable") == true)
        #expect(error("no-dir")?.message.contains("does not exist") == true)
        #expect(result.events("skip", node: "after-missing").first?.reason == .upstreamFailed)
        #expect(result.events("complete", node: "cleanup").count == 1)
        #expect(result.events("complete", node: "independent").count == 1)

        // Fail-fast (no -k): the first spawn error ends the run; nothing hangs.
        let failFast = try moon.run(["run", "--json", "-j", "1"])
        #expect(failFast.status == 1)
        #expect(failFast.events("graph-complete").first?.ok == false)
    }

    /// `write-file` on a full disk (a 64 KiB tmpfs; needs root to mount):
    /// an `error` of kind `builtin` naming the path and the reason, no
    /// partial file left behind, and the dependents are skipped.
    @Test(.enabled(if: getuid() == 0)) func writeFileOnAFullDiskIsABuiltinError() throws {
        let moon = try Moon()
        let mountPoint = moon.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try shell("mount -t tmpfs -o size=64k moon-test-tmpfs small", in: moon)
        try #require(mounted.status == 0, "cannot mount a tmpfs: \(mounted.stderr)")
        defer { _ = try? shell("umount small", in: moon) }
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              fill:
                uses: write-file
                with:
                  path: small/out.txt
                  content: "\(String(repeating: "0123456789abcdef", count: 8192))"
              then:
                needs: [fill]
                run: echo never
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1)
        let error = result.events("error", node: "fill").first?.error
        #expect(error?.kind == .builtin)
        let message = error?.message ?? ""
        #expect(message.contains("small/out.txt"), "\(message)")
        #expect(message.lowercased().contains("space"), "\(message)")
        #expect(result.events("skip", node: "then").first?.reason == .upstreamFailed)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    // MARK: Graphs that grow after loading, strings the system cannot take

    /// A few small files that would expand exponentially (an include
    /// diamond, a var that reads the previous var twice) stop at once with
    /// an error at their place; memory is bounded by `ulimit` so that a
    /// regression fails instead of taking the machine.
    @Test(arguments: ["diamond", "vars", "lists"])
    func smallFilesThatExpandExponentiallyAreRefusedAtOnce(kind: String) throws {
        let moon = try Moon()
        var expected: String
        switch kind {
        case "diamond":
            for i in 0...40 {
                let includes = i < 40 ? "includes: { x: d\(i + 1).yaml, y: d\(i + 1).yaml }\n" : ""
                try moon.write("d\(i).yaml", "version: 1\n\(includes)nodes:\n  n: { run: 'true' }\n")
            }
            expected = ": error: includes read more than 1000 files"
        case "vars":
            var text = "version: 1\nvars:\n  v0: xxxxxxxxxx\n"
            for i in 1...30 { text += "  v\(i): \"${{ vars.v\(i - 1) }}${{ vars.v\(i - 1) }}\"\n" }
            try moon.write("d0.yaml", text + "nodes:\n  a: { run: 'echo ${{ vars.v30 }}' }\n")
            expected = "d0.yaml:20:3: error: var 'v17' is longer than 1 MiB"
        default:
            var text = "version: 1\nvars:\n  v0: [x]\n"
            for i in 1...24 { text += "  v\(i): [\"${{ vars.v\(i - 1) }}\", \"${{ vars.v\(i - 1) }}\"]\n" }
            try moon.write("d0.yaml", text + "nodes:\n  a: { run: 'echo ${{ vars.v24 }}' }\n")
            expected = "d0.yaml:20:3: error: var 'v17' has more than 100000 items"
        }
        let r = try Measured.shell("ulimit -v 4000000; timeout -s KILL 30 \"$MOON\" check d0.yaml", in: moon, limit: 40)
        #expect(r.status == 2, "\(r.status) \(r.stderr.prefix(2000))")
        #expect(r.stderr.contains(expected), "\(r.stderr.prefix(2000))")
        #expect(r.stderr.contains("help:"), "\(r.stderr.prefix(2000))")
        #expect(r.seconds < 10, "took \(r.seconds)s")
    }

    /// A NUL written as an escape (`\0`, `\x00`, `\u0000`) would cut a
    /// command, an argument or a path short where moon hands it to the
    /// system: `check` refuses it at its place, and `run` runs nothing.
    @Test(arguments: [
        "{ run: \"echo a\\0b\" }",
        "{ run: [echo, \"a\\0b\"] }",
        "{ uses: exists, with: { path: \"/etc\\0/nonexist\" } }",
        "{ run: 'true', dir: \"a\\0b\" }",
        "{ uses: write-file, with: { path: \"victim\\0.txt\", content: x } }",
    ])
    func aNULInAStringIsRefusedByCheckAndRun(node: String) throws {
        let moon = try Moon(graph: "version: 1\nvars: { v: x }\nnodes:\n  a: \(node)\n")
        try moon.makeDirectory("ab")
        for command in ["check", "run"] {
            let r = try moon.run([command], limit: 30)
            #expect(r.status == 2, "\(command): \(r.status) \(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("moon.yaml:4:"), "\(command): \(r.stderr)")
            #expect(r.stderr.contains("error: a NUL character cannot"), "\(command): \(r.stderr)")
        }
        #expect(moon.read("victim%00.txt") == nil && moon.read("victim") == nil)
    }

    @Test func aNULInAVarIsRefusedByCheck() throws {
        let moon = try Moon(graph: "version: 1\nvars: { v: \"a\\0b\" }\nnodes:\n  a: { run: 'echo ${{ vars.v }}' }\n")
        let r = try moon.run(["check"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("moon.yaml:2:12: error: a NUL character cannot"), "\(r.stderr)")
    }

    /// Messages that say what to write, and a dotenv file an editor saved with a BOM.
    @Test func anEmptyMatrixKeyABareNeedsAndADotenvBOM() throws {
        let moon = try Moon(graph: """
            version: 1
            dotenv: [.env]
            nodes:
              b: { run: 'echo "$GREETING"' }
              m: { matrix: { x: [] }, run: 'true' }
              n: { needs: b, run: 'echo ${{ needs }}' }
            """)
        try moon.write(".env", "\u{FEFF}GREETING=hello\n")
        let r = try moon.run(["check"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("moon.yaml:5:21: error: matrix key 'x' has no values") && !r.stderr.contains("no keys"), "\(r.stderr)")
        #expect(r.stderr.contains("'needs' alone is not a value; write needs.NODE.outputs.KEY or needs.NODE.result"), "\(r.stderr)")
        #expect(!r.stderr.contains(".env"), "\(r.stderr)")
        let run = try moon.run(["run", "b"])
        #expect(run.status == 2)
        try moon.write("moon.yaml", "version: 1\ndotenv: [.env]\nnodes:\n  b: { run: 'echo \"$GREETING\"' }\n")
        let ok = try moon.run(["run", "b"])
        #expect(ok.status == 0 && ok.stdout.contains("hello"), "\(ok.stdout) \(ok.stderr)")
    }
}
