import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// The real binary on a real terminal: moon runs inside a detached tmux
/// session (its own server socket, so it never touches anyone's tmux), and
/// the test reads the screen with `capture-pane` while it runs and after.
final class TmuxSession {
    static let tmux = which("tmux")
    static let available = tmux != nil && Repository.hasMoon
    static let reason: Comment = tmux == nil ? "tmux is not installed (apt-get install tmux)" : "the moon binary is not built (swift build)"

    let socket = "moon-test-\(UUID().uuidString.prefix(8))"
    let directory: URL

    init(files: [String: String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-tty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
    }

    deinit {
        spawnAndWait(Self.tmux!, ["-L", socket, "kill-server"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `command` (a shell command line) in a 100×30 window; after it
    /// ends the window shows `MOON-EXIT=<status>` and stays open.
    func start(_ command: String, environment: [String: String] = [:], width: Int = 100, height: Int = 30) {
        var env = "env -u NO_COLOR -u FORCE_COLOR -u CLICOLOR_FORCE TERM=xterm-256color"
        for (k, v) in environment { env += " \(k)=\(v)" }
        let script = "cd '\(directory.path)' && \(env) \(command); echo MOON-EXIT=$?; sleep 120"
        spawnAndWait(Self.tmux!, ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", script])
    }

    /// The screen as text (`escapes`: with its colour attributes as escape sequences).
    func screen(escapes: Bool = false) -> String {
        spawnAndWait(Self.tmux!, ["-L", socket, "capture-pane", "-p"] + (escapes ? ["-e"] : [])).stdout
    }

    /// The screen once `condition` holds (nil after `limit` seconds).
    func waitFor(_ limit: TimeInterval = 20, _ condition: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            let text = screen()
            if condition(text) { return text }
            usleep(50_000)
        }
        return nil
    }
}

let sleepyGraph = """
    version: 1
    name: sleepy
    queues:
      net: { concurrency: 1 }
    nodes:
      fetch:
        queue: net
        run: "echo fetching; sleep 2; echo fetched"
      quiet-one:
        run: "sleep 2.5"
      build:
        needs: [fetch, quiet-one]
        run: "echo building"
    """

@Suite(.serialized, .enabled(if: TmuxSession.available, TmuxSession.reason))
struct TerminalTests {
    @Test func liveStatusWhileRunningCleanSummaryAfter() throws {
        let session = try TmuxSession(files: ["moon.yaml": sleepyGraph])
        session.start("'\(Repository.moon)' run")
        // Wait for fetch's first line too: the status area is drawn before it.
        let running = try #require(session.waitFor { $0.contains("[0/3]") && $0.contains("│ fetching") }, "no status area:\n\(session.screen())")
        let lines = running.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("[0/3] ") && $0.contains("2 running") }, "\(running)")
        #expect(lines.contains { $0.contains("fetch") && $0.contains("net") }, "\(running)")
        #expect(lines.contains { $0.contains("quiet-one") && $0.contains("default") }, "\(running)")
        #expect(lines.contains { $0.contains("fetch") && $0.contains("│ fetching") }, "\(running)")
        #expect(lines.allSatisfy { $0.count <= 100 })

        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        let end = done.split(separator: "\n").map(String.init)
        #expect(done.contains("MOON-EXIT=0"))
        #expect(!end.contains { $0.hasPrefix("[") && $0.contains("/3]") }, "status area left on screen:\n\(done)")
        #expect(!done.contains("running ·"), "\(done)")
        #expect(end.contains { $0.hasPrefix("✓ build") })
        #expect(end.contains { $0.hasPrefix("critical path: ") && $0.contains("quiet-one") && $0.contains("→ build") })
        let result = try #require(end.firstIndex { $0.hasPrefix("moon: ok - 3 succeeded in ") }, "\(done)")
        #expect(end[result + 1].hasPrefix("MOON-EXIT=0"), "the summary is the last thing moon prints")
    }

    @Test func noColorMeansNoEscapesOnTheScreen() throws {
        let session = try TmuxSession(files: ["moon.yaml": sleepyGraph])
        session.start("'\(Repository.moon)' run", environment: ["NO_COLOR": "1"])
        let running = try #require(session.waitFor { $0.contains("[0/3]") && $0.contains("│ fetching") }, "no status line:\n\(session.screen())")
        #expect(running.contains("fetch     │ fetching"), "\(running)")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
        let withAttributes = session.screen(escapes: true)
        #expect(!withAttributes.contains("\u{1B}["), "escape sequences with NO_COLOR:\n\(withAttributes)")
        #expect(withAttributes.contains("moon: ok - 3 succeeded"))
        #expect(!withAttributes.split(separator: "\n").contains { $0.hasPrefix("[") }, "status left:\n\(withAttributes)")
    }

    /// `--stall-after` sets when a silent node is marked stalled (default 30 s).
    @Test func stallAfterMarksASilentNode() throws {
        let session = try TmuxSession(files: ["moon.yaml": """
            version: 1
            nodes:
              silent:
                run: "echo hello; sleep 3"
            """])
        session.start("'\(Repository.moon)' run --stall-after 300ms")
        let stalled = try #require(session.waitFor { $0.contains("stalled: no output for") }, "not marked:\n\(session.screen())")
        #expect(stalled.contains("silent"), "\(stalled)")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
    }

    /// A node printing progress dots or a `\r` progress bar, a byte every
    /// 100 ms and no newline for seconds: not stalled (stall detection counts
    /// bytes), and its line so far shows in its status row; the line reaches
    /// the output once it ends.
    @Test func aLineBeingWrittenShowsInTheStatusRowAndIsNoStall() throws {
        let session = try TmuxSession(files: ["moon.yaml": """
            version: 1
            nodes:
              dots:
                run: "for i in $(seq 1 40); do printf .; sleep 0.1; done; echo done"
              bar:
                run: "for i in $(seq 1 40); do printf '\\rprogress %d%%' $i; sleep 0.1; done; echo"
            """])
        session.start("'\(Repository.moon)' run --stall-after 1s")
        // The status rows (with their queue), not the output above them.
        func row(_ node: String, _ screen: String, _ text: String) -> Bool {
            screen.split(separator: "\n").contains { $0.hasPrefix("  \(node) ") && $0.contains(" default ") && $0.contains(text) }
        }
        let screen = try #require(session.waitFor { row("dots", $0, "│ ...") && row("bar", $0, "│ progress ") },
                                  "no line being written in the status area:\n\(session.screen())")
        // Past --stall-after (2 s of dots), bytes still coming: no stall.
        let later = try #require(session.waitFor { row("dots", $0, "│ " + String(repeating: ".", count: 20)) }, "\(session.screen())")
        #expect(!screen.contains("stalled") && !later.contains("stalled"), "\(later)")
        #expect(row("bar", later, "│ progress ") && !later.contains("%progress"), "\(later)")
        let end = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "\(session.screen())")
        #expect(end.contains("dots │ ........................................done"), "\(end)")
        #expect(end.contains("bar  │ progress 40%"), "\(end)")
    }

    @Test func colourIsOnByDefaultOnATerminal() throws {
        let session = try TmuxSession(files: ["moon.yaml": sleepyGraph])
        session.start("'\(Repository.moon)' run")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
        #expect(session.screen(escapes: true).contains("\u{1B}["))
    }

    @Test func replayAtRecordedSpeedShowsTheLiveView() throws {
        let session = try TmuxSession(files: ["events.jsonl": Fixture.jsonLines(Fixture.failingRun)])
        session.start("'\(Repository.moon)' replay --speed recorded events.jsonl", width: 80, height: 40)
        let running = try #require(session.waitFor { $0.contains("running") && $0.contains("build") && $0.hasPrefix("moon: running demo") },
                                   "no live view:\n\(session.screen())")
        #expect(running.contains("[0/5]") || running.contains("[1/5]") || running.contains("[2/5]"), "\(running)")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
        #expect(done.contains("MOON-EXIT=1"), "a failed run replays with exit 1")
        #expect(done.contains("✗ test failed (exit 1): exited with code 1"))
        #expect(!done.split(separator: "\n").contains { $0.hasPrefix("[") && $0.contains("/5]") }, "\(done)")
    }
}

@Suite(.enabled(if: Repository.hasMoon, "the moon binary is not built (swift build)"))
struct ReplayCommandTests {
    /// A JSON Lines file in the temporary directory; the test removes it with `defer`.
    func write(_ text: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moon-replay-\(UUID().uuidString).jsonl")
        try! Data(text.utf8).write(to: url)
        return url
    }

    @Test func plainReplayIsThePlainLog() throws {
        let url = write(Fixture.jsonLines(Fixture.failingRun))
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", "--output", "plain", url.path]))
        #expect(result.status == 1)
        let capture = CapturedSink()
        let reporter = PlainReporter(sink: capture.sink)
        for event in Fixture.failingRun { reporter.report(event) }
        reporter.finish()
        #expect(result.stdout == capture.text)
    }

    @Test func badLineIsAnErrorWithItsNumber() throws {
        let url = write(Fixture.jsonLines(Array(Fixture.passingRun.prefix(2))) + "{\"v\":1,\"seq\":3}\n")
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", url.path]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon: error: \(url.path):3: missing field 'ts'"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing rendered from a bad file")
    }

    @Test func missingFileIsAnError() throws {
        let result = try #require(runProgram(Repository.moon, ["replay", "/nonexistent/events.jsonl"]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("no such file"))
    }

    @Test func passingRunExitsZero() throws {
        let url = write(Fixture.jsonLines(Fixture.passingRun))
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", "-q", url.path]))
        #expect(result.status == 0)
        #expect(result.stdout == "moon: ok - 3 succeeded in 203ms\n")
    }

    /// A real run, recorded with --json and replayed: valid against the schema, and
    /// the plain replay (times normalised) matches a golden file.
    @Test func realRunRecordsAndReplays() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moon-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("""
            version: 1
            name: chain
            nodes:
              first: { run: "echo one; echo two >&2" }
              second: { needs: first, uses: echo, with: { message: "42" } }
              third: { needs: second, run: "echo nope; exit 4" }
              fourth: { needs: third, run: "echo never" }
            """.utf8).write(to: dir.appendingPathComponent("moon.yaml"))
        let recorded = try #require(runProgram(Repository.moon, ["run", "--json"], directory: dir))
        #expect(recorded.status == 1)
        if SchemaValidator.available {
            let valid = SchemaValidator.validate(recorded.stdout, complete: true)
            #expect(valid.ok, "\(valid.messages)")
        }
        let url = write(recorded.stdout)
        defer { try? FileManager.default.removeItem(at: url) }
        let replayed = try #require(runProgram(Repository.moon, ["replay", "--output", "plain", "-v", url.path]))
        #expect(replayed.status == 1)
        // Which node was slowest depends on the machine: keep the line, not its order.
        let text = Golden.normalizeTimes(replayed.stdout).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("slowest: ") ? "slowest: <nodes>" : String($0) }.joined(separator: "\n")
        Golden.check("replay-chain.txt", text)
    }
}
