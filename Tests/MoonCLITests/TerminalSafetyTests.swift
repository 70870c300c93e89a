import Foundation
import MoonEvents
import Testing

/// What reaches the terminal, and what happens when it cannot be reached:
/// text from a file, a node or a recording never carries an escape sequence
/// or a control character (C0 or C1) into moon's output, in any mode; a
/// failed write to stderr or stdout never traps; a line longer than the
/// split size is cut between characters.
@Suite struct TerminalSafetyTests {
    enum Target {
        /// A file the test reads back.
        case file
        /// `/dev/full`: every write fails with ENOSPC.
        case full
        /// A pipe whose reader has gone: every write fails with EPIPE.
        case closedPipe
    }

    /// Runs moon with stdout and stderr sent to `stdout` and `stderr`: its
    /// exit status and what stdout said (when it is a file).
    private func run(_ moon: Moon, _ arguments: [String], stdout: Target = .file, stderr: Target = .file) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moon.binary)
        process.arguments = arguments
        process.currentDirectoryURL = moon.directory
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let out = moon.directory.appendingPathComponent(".out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        var toClose: [Int32] = []
        func handle(_ target: Target) throws -> FileHandle {
            switch target {
            case .file: return try FileHandle(forWritingTo: out)
            case .full: return try #require(FileHandle(forWritingAtPath: "/dev/full"))
            case .closedPipe:
                var fds: [Int32] = [0, 0]
                #expect(pipe(&fds) == 0)
                close(fds[0])
                toClose.append(fds[1])
                return FileHandle(fileDescriptor: fds[1], closeOnDealloc: false)
            }
        }
        process.standardOutput = try handle(stdout)
        process.standardError = try handle(stderr)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        for fd in toClose { close(fd) }
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            Issue.record("moon did not finish within 60s")
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "moon \(arguments) was killed by signal \(process.terminationStatus)")
        return (process.terminationStatus, (try? String(contentsOf: out, encoding: .utf8)) ?? "")
    }

    // MARK: F7: a failed write

    /// stderr on /dev/full or on a pipe nobody reads: every command that has
    /// something to say there (an invalid file, an unknown subcommand, a bad
    /// option, a --set warning, a node's failure, the live view) ends with
    /// its normal exit code and does its work, never SIGILL (Foundation's
    /// FileHandle.write trapped: 132).
    static let stderrCases: [([String], Int32)] = [
        (["check", "bad.yaml"], Int32(2)), (["list", "bad.yaml"], 2), (["nosuchcmd"], 2), (["run", "--jobs", "abc"], 2),
        (["run", "--set", "nosuch=1"], 0), (["run", "fails.yaml"], 1), (["graph", "bad.yaml"], 2), (["history", "bad.yaml"], 2),
        (["status", "nosuchnode"], 2), (["check", "missing.yaml"], 2),
    ]

    @Test(arguments: stderrCases)
    func aFailingStderrNeverTraps(_ arguments: [String], _ code: Int32) throws {
        for target in [Target.full, .closedPipe] {
            let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: \"echo hi >&2; touch ran\" }\n")
            try moon.write("bad.yaml", "version: 1\nnodes:\n  a: { runn: x }\n")
            try moon.write("fails.yaml", "version: 1\nnodes:\n  a: { run: \"echo oops >&2; exit 3\" }\n")
            let result = try run(moon, arguments, stderr: target)
            #expect(result.status == code, "moon \(arguments) with stderr \(target)")
            if arguments.contains("nosuch=1") { #expect(FileManager.default.fileExists(atPath: moon.path("ran"))) }
        }
    }

    /// stdout on /dev/full: the command's own exit code when it failed, else 1.
    @Test func aFullStdoutKeepsTheExitCode() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: \"touch ran\" }\n")
        try moon.write("bad.yaml", "version: 1\nnodes:\n  a: { runn: x }\n")
        // A command that succeeded but whose output was lost exits 1 (CommandLineHostileTests.aFullStdoutIsAnError).
        #expect(try run(moon, ["list"], stdout: .full).status == 1)
        #expect(try run(moon, ["check"], stdout: .full).status == 1)
        #expect(try run(moon, ["check", "bad.yaml"], stdout: .full, stderr: .full).status == 2)
        #expect(try run(moon, ["nosuch"], stdout: .full, stderr: .full).status == 2)
        #expect(try run(moon, ["--help"], stdout: .full).status == 1)
    }

    /// A closed stdout pipe: 141, as for a command killed by SIGPIPE; a run
    /// stops and still records its history (no state lost).
    @Test func aClosedStdoutPipeExits141() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { description: \"first\", run: \"sleep 0.2\" }\n")
        #expect(try run(moon, ["list"], stdout: .closedPipe).status == 141)
        #expect(try run(moon, ["graph"], stdout: .closedPipe).status == 141)
        #expect(try run(moon, ["run", "-n"], stdout: .closedPipe).status == 141)
        #expect(try run(moon, ["run"], stdout: .closedPipe, stderr: .closedPipe).status == 141)
        let history = try moon.run(["history"])
        #expect(history.stdout.contains("interrupted"), "\(history.stdout)")
    }

    // MARK: F11, F12: text from files and nodes

    /// A graph whose texts and outputs carry an OSC title, a screen clear,
    /// and C1 controls (U+009D OSC, U+0090 DCS, U+009C ST, U+0085).
    static let hostile = #"""
        version: 1
        name: "T\e]0;NAME-TITLE\a\e[2J"
        description: "graph\e[31m red"
        nodes:
          a:
            description: "desc\e]0;DESC-TITLE\a\u009d0;C1\u009c"
            run: "printf 'bad line \\033]0;OUT-TITLE\\007\\033[2J\\n' >> \"$MOON_OUTPUT\" # \e]0;CMD-TITLE\a"
          p: { run: "printf 'msg=\\033]0;P-TITLE\\007\\302\\2350;C1-MSG\\302\\234x\\n' >> \"$MOON_OUTPUT\"" }
          f: { needs: p, uses: fail, with: { message: "${{ needs.p.outputs.msg }}" } }
          e: { needs: p, uses: exists, with: { path: "/nonexist/${{ needs.p.outputs.msg }}" } }
          c: { run: "printf 'x\\302\\2350;C1-ONLY\\302\\234y dcs:\\302\\220payload\\302\\234 nel:\\302\\205\\n'" }
        """#

    /// Whether `text` holds an escape sequence or a C0/C1 control character
    /// other than tab and line feed.
    private func unsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { s in
            (s.value < 0x20 && s != "\n" && s != "\t") || (0x7F...0x9F).contains(s.value)
        }
    }

    /// Every printer, every mode, colour off: nothing from the file or the
    /// nodes reaches stdout or stderr raw.
    static let printers: [[String]] = [
        ["run", "-k", "-v", "--color", "never"], ["run", "-k", "--output", "plain"], ["run", "-k", "--output", "tty", "--color", "never"],
        ["run", "-k", "--json"], ["run", "-n"], ["list"], ["graph"], ["graph", "--format", "json"], ["graph", "--format", "dot"],
        ["graph", "--format", "mermaid"], ["status"], ["run", "-k", "-q", "--output-mode", "grouped"],
    ]

    @Test(arguments: printers)
    func escapeSequencesFromTheGraphNeverReachTheTerminal(_ arguments: [String]) throws {
        // The live view's status line is drawn for certain: a node runs
        // for several of its refresh ticks.
        let live = arguments.contains("tty")
        let moon = try Moon(graph: Self.hostile + (live ? "\n  slow: { run: \"sleep 0.5\" }\n" : ""))
        let result = try moon.run(arguments)
        var stdout = result.stdout
        if live {
            #expect(stdout.contains("\r"), "the status line was not drawn: \(stdout.debugDescription)")
            stdout = withoutOwnRedraws(stdout)
        }
        #expect(!unsafe(stdout), "moon \(arguments.joined(separator: " ")): \(stdout.debugDescription)")
        #expect(!unsafe(result.stderr), "moon \(arguments.joined(separator: " ")): \(result.stderr.debugDescription)")
        if arguments == ["list"] { #expect(result.stdout.contains("desc0;C1")) }
        if arguments.contains("-v") {
            // What is left is still there: the text between the sequences.
            #expect(result.stdout.contains("x0;C1-ONLYy dcs:payload nel:"), "\(result.stdout)")
            #expect(result.stdout.contains("f failed (failed): msg=") || result.stdout.contains("f failed (failed): 0;C1-MSGx"), "\(result.stdout)")
        }
    }

    /// `text` without the colourless live view's erasures of its status
    /// line (`\r`, blanks, `\r`): moon's own, and the graph's text has
    /// no carriage return that such a pattern could hide.
    private func withoutOwnRedraws(_ text: String) -> String {
        text.replacingOccurrences(of: "\r *\r", with: "", options: .regularExpression)
    }

    /// `text` without SGR sequences and the status area's cursor movement
    /// (`ESC [ digits ; … m|A|J|K`): moon's own.
    private func withoutOwnStyling(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            if scalars[i] == "\u{1B}", i + 1 < scalars.count, scalars[i + 1] == "[" {
                var j = i + 2
                while j < scalars.count, ("0"..."9").contains(scalars[j]) || scalars[j] == ";" { j += 1 }
                if j < scalars.count, "mAJK".unicodeScalars.contains(scalars[j]) {
                    i = j + 1
                    continue
                }
            }
            out.append(scalars[i])
            i += 1
        }
        return String(out)
    }

    /// With colour on, the only escape sequences are moon's own styling (SGR).
    @Test func withColourOnlyMoonsOwnStylingIsSent() throws {
        let moon = try Moon(graph: Self.hostile)
        for arguments in [["run", "-k", "-v", "--color", "always", "--output", "plain"], ["run", "-k", "--color", "always", "--output", "tty"]] {
            let result = try moon.run(arguments, environment: ["NO_COLOR": "", "TERM": "xterm"])
            let withoutStyling = withoutOwnStyling(result.stdout)
            #expect(!unsafe(withoutStyling.replacingOccurrences(of: "\r", with: "")), "\(arguments): \(withoutStyling.debugDescription)")
            #expect(!result.stdout.contains("TITLE\u{07}"))
        }
    }

    /// `moon replay` of an untrusted recording: error messages, node names
    /// in paths, output, all cleaned; and an event-decoding error quoting the line.
    @Test func replayOfAHostileRecordingIsCleaned() throws {
        let moon = try Moon()
        let events = [
            #"{"v":1,"seq":1,"ts":"2024-01-01T00:00:00.000Z","event":"graph-start","graph":"g\u001b]0;G-TITLE\u0007","nodes":["a"],"plan":["a"],"queues":{"default":1}}"#,
            #"{"v":1,"seq":2,"ts":"2024-01-01T00:00:00.001Z","event":"start","node":"a","queue":"default","attempt":1,"command":"echo \u001b]0;CMD\u0007"}"#,
            #"{"v":1,"seq":3,"ts":"2024-01-01T00:00:00.002Z","event":"next","node":"a","stream":"stdout","text":"out \u009d0;C1\u009c \u001b[2J"}"#,
            #"{"v":1,"seq":4,"ts":"2024-01-01T00:00:00.003Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"exit","message":"boom \u001b]0;ERRTITLE\u0007\u001b[2J","exit_code":1}}"#,
            #"{"v":1,"seq":5,"ts":"2024-01-01T00:00:00.004Z","event":"graph-complete","ok":false,"duration_ms":4,"counts":{"succeeded":0,"failed":1,"skipped":0,"canceled":0},"critical_path":["a"]}"#,
        ]
        try moon.write("good.jsonl", events.joined(separator: "\n") + "\n")
        for output in ["plain", "tty"] {
            let result = try moon.run(["replay", "good.jsonl", "-v", "--output", output, "--color", "never"])
            #expect(result.status == 1)
            #expect(result.stdout.contains("boom"))
            #expect(!unsafe(result.stdout.replacingOccurrences(of: "\r", with: "")), "\(output): \(result.stdout.debugDescription)")
        }
        try moon.write("bad.jsonl", #"{"v":1,"seq":1,"event":"nope \u001b]0;BAD\u0007"}"# + "\n")
        let bad = try moon.run(["replay", "bad.jsonl"])
        #expect(bad.status == 2)
        #expect(!unsafe(bad.stderr), "\(bad.stderr.debugDescription)")
    }

    // MARK: F13: long lines

    /// A 3 MB line of CJK and a 2.8 MB line of emoji arrive in parts of at
    /// most 1 MiB whose concatenation is the line: no U+FFFD, nothing lost.
    @Test func longLinesAreSplitBetweenCharacters() throws {
        let moon = try Moon(graph: #"""
            version: 1
            nodes:
              cjk: { run: "python3 -c \"import sys; sys.stdout.write('中'*1000000 + '\\n')\"" }
              emoji: { run: "python3 -c \"import sys; sys.stdout.write('a' + '😀'*700000 + '\\n')\"" }
              mixed: { run: "python3 -c \"import sys; sys.stdout.write('ab' + 'é中😀'*200000)\"" }
            """#)
        let result = try moon.run(["run", "--json"], limit: 120)
        #expect(result.status == 0)
        let expected = ["cjk": String(repeating: "中", count: 1_000_000), "emoji": "a" + String(repeating: "😀", count: 700_000),
                        "mixed": "ab" + String(repeating: "é中😀", count: 200_000)]
        for (node, line) in expected {
            let parts = result.events("next", node: node).compactMap { $0.text }
            #expect(parts.count >= 2, "\(node)")
            #expect(parts.allSatisfy { $0.utf8.count <= 1_048_576 }, "\(node): \(parts.map(\.utf8.count))")
            #expect(parts.joined() == line, "\(node)")
            #expect(!parts.joined().contains("\u{FFFD}"))
        }
    }
}
