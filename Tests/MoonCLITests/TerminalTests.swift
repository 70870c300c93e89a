import Foundation
import Testing

/// The real binary on a real terminal: moon runs inside a detached tmux
/// session (its own server socket, so it never touches anyone's tmux), in
/// the directory of a `Moon`, and the test reads the screen with
/// `capture-pane` while it runs and after.
final class TmuxSession {
    static let tmux = onPath("tmux")
    static let available = tmux != nil

    let socket = "moon-test-\(UUID().uuidString.prefix(8))"
    let moon: Moon

    init(in moon: Moon) { self.moon = moon }

    deinit { spawnAndWait(Self.tmux!, ["-L", socket, "kill-server"]) }

    /// Starts `moon ARGUMENTS` in a 100×30 window; after it ends the window
    /// shows `MOON-EXIT=<status>` and stays open.
    func start(_ arguments: String, environment: [String: String] = [:], width: Int = 100, height: Int = 30) {
        var env = "env -u NO_COLOR -u FORCE_COLOR -u CLICOLOR_FORCE TERM=xterm-256color"
        for (k, v) in environment { env += " \(k)=\(v)" }
        let script = "cd '\(moon.directory.path)' && \(env) '\(Moon.binary)' \(arguments); echo MOON-EXIT=$?; sleep 120"
        spawnAndWait(Self.tmux!, ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", script])
    }

    /// The screen as text (`escapes`: with its colour attributes as escape sequences).
    func screen(escapes: Bool = false) -> String {
        spawnAndWait(Self.tmux!, ["-L", socket, "capture-pane", "-p"] + (escapes ? ["-e"] : [])).stdout
    }

    /// The screen once `condition` holds (nil after `limit` seconds). tmux
    /// has no way to say when the screen changes, so this reads it every 50 ms.
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

/// The first executable called `name` on PATH.
func onPath(_ name: String) -> String? {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs a program with posix_spawn and waits for it; its stdout as text.
/// For tmux: Foundation's `Process` waits until every copy of its internal
/// descriptors is closed, and the tmux server (a daemon the client forks)
/// keeps them, so `Process` would wait for the server to exit.
@discardableResult
func spawnAndWait(_ path: String, _ arguments: [String]) -> (status: Int32, stdout: String) {
    let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("moon-spawn-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: outPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    // The test process blocks signals on some threads (the launcher's own
    // tests run here); a tmux server spawned with that mask passes it to its
    // shells, which then never take kill-server's SIGHUP and outlive the test.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, &attributes, argv, environ) == 0 else { return (-1, "") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), text)
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

@Suite(.serialized, .enabled(if: TmuxSession.available, "tmux is not installed (make test-deps, or apt-get install tmux)"))
struct TerminalTests {
    @Test func liveStatusWhileRunningCleanSummaryAfter() throws {
        let session = TmuxSession(in: try Moon(graph: sleepyGraph))
        session.start("run")
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
        let session = TmuxSession(in: try Moon(graph: sleepyGraph))
        session.start("run", environment: ["NO_COLOR": "1"])
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
        let session = TmuxSession(in: try Moon(graph: """
            version: 1
            nodes:
              silent:
                run: "echo hello; sleep 3"
            """))
        session.start("run --stall-after 300ms")
        let stalled = try #require(session.waitFor { $0.contains("stalled: no output for") }, "not marked:\n\(session.screen())")
        #expect(stalled.contains("silent"), "\(stalled)")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
    }

    /// A node printing progress dots or a `\r` progress bar, a byte every
    /// 100 ms and no newline for seconds: not stalled (stall detection counts
    /// bytes), and its line so far shows in its status row; the line reaches
    /// the output once it ends.
    @Test func aLineBeingWrittenShowsInTheStatusRowAndIsNoStall() throws {
        let session = TmuxSession(in: try Moon(graph: """
            version: 1
            nodes:
              dots:
                run: "for i in $(seq 1 40); do printf .; sleep 0.1; done; echo done"
              bar:
                run: "for i in $(seq 1 40); do printf '\\rprogress %d%%' $i; sleep 0.1; done; echo"
            """))
        session.start("run --stall-after 1s")
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
        let session = TmuxSession(in: try Moon(graph: sleepyGraph))
        session.start("run")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
        #expect(session.screen(escapes: true).contains("\u{1B}["))
    }

    /// A real failing run recorded with `--json`, replayed at its recorded
    /// speed: the live view while it plays, the failure and exit 1 after.
    @Test func replayAtRecordedSpeedShowsTheLiveView() throws {
        let moon = try Moon(graph: """
            version: 1
            name: demo
            nodes:
              build: { run: "echo compiling; sleep 1.5; echo compiled" }
              lint: { needs: build, run: "sleep 5" }
              test: { needs: build, run: "echo testing; sleep 0.3; exit 1" }
              deploy: { needs: [lint, test], run: "echo never" }
            """)
        let recorded = try moon.run(["run", "--json", "--grace", "1s"])
        #expect(recorded.status == 1)
        try moon.write("events.jsonl", recorded.stdout)
        let session = TmuxSession(in: moon)
        session.start("replay --speed recorded events.jsonl", width: 80, height: 40)
        let running = try #require(session.waitFor { $0.contains("running") && $0.contains("build") && $0.hasPrefix("moon: running demo") },
                                   "no live view:\n\(session.screen())")
        #expect(running.contains("[0/4]"), "\(running)")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") })
        #expect(done.contains("MOON-EXIT=1"), "a failed run replays with exit 1")
        #expect(done.contains("✗ test failed (exit 1): exited with code 1"), "\(done)")
        #expect(!done.split(separator: "\n").contains { $0.hasPrefix("[") && $0.contains("/4]") }, "\(done)")
    }
}
