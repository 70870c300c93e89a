import Foundation
import Testing

/// Hostile input to the commands that read or write files for the user
/// (`replay`, `export -o`), stdout that cannot be written, export texts that
/// could leave a script's comments, and completion and suggestion edge cases:
/// an error with a message, never a trap, a hang or a replaced device.
@Suite struct CommandLineHostileTests {
    /// A recording of a real run: a failed node, a node with an output.
    static let recording = [
        #"{"v":1,"seq":1,"ts":"2026-11-25T12:44:36.470Z","event":"graph-start","graph":"moon","nodes":2,"plan":["a","b"],"queues":{"default":2}}"#,
        #"{"v":1,"seq":2,"ts":"2026-11-25T12:44:36.482Z","event":"start","node":"a","queue":"default","attempt":1,"command":"exit 3"}"#,
        #"{"v":1,"seq":3,"ts":"2026-11-25T12:44:36.483Z","event":"start","node":"b","queue":"default","attempt":1,"command":"echo"}"#,
        #"{"v":1,"seq":4,"ts":"2026-11-25T12:44:36.491Z","event":"complete","node":"b","duration_ms":9,"exit_code":0,"outputs":{"x":"1"}}"#,
        #"{"v":1,"seq":5,"ts":"2026-11-25T12:44:36.492Z","event":"retry","node":"a","attempt":2,"delay_ms":1,"error":"exited with code 3"}"#,
        #"{"v":1,"seq":6,"ts":"2026-11-25T12:44:36.494Z","event":"error","node":"a","duration_ms":12,"error":{"kind":"exit","message":"exited with code 3","exit_code":3,"signal":9}}"#,
        #"{"v":1,"seq":7,"ts":"2026-11-25T12:44:36.494Z","event":"skip","node":"c","reason":"up-to-date","restored":{"files":1,"bytes":10}}"#,
        #"{"v":1,"seq":8,"ts":"2026-11-25T12:44:36.494Z","event":"graph-complete","ok":false,"duration_ms":25,"counts":{"succeeded":1,"failed":1,"skipped":0,"canceled":0},"critical_path":["a"]}"#,
    ]

    // MARK: H2: replay

    /// An exit code or a signal beyond Int32 is exit 2 naming the line and
    /// the field, never a trap.
    @Test func replayRefusesNumbersOutOfRange() throws {
        let moon = try Moon()
        let cases = [
            ("error", #""error":{"kind":"exit","message":"m","exit_code":2147483648}"#, "error.exit_code"),
            ("error", #""error":{"kind":"signal","message":"m","signal":4294967296}"#, "error.signal"),
            ("complete", #""exit_code":1099511627776"#, "exit_code"),
        ]
        for (event, fields, field) in cases {
            let third = #"{"v":1,"seq":3,"ts":"2026-11-25T12:44:36.494Z","event":"\#(event)","node":"a","duration_ms":12,\#(fields)}"#
            try moon.write("rec.jsonl", Self.recording[0] + "\n" + Self.recording[1] + "\n" + third + "\n")
            let result = try moon.run(["replay", "rec.jsonl"])
            #expect(result.status == 2, "\(field): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("rec.jsonl:3: field '\(field)' out of range"), "\(result.stderr)")
        }
    }

    /// A line that is not strict JSON (a key twice, NaN, nesting past the
    /// parser's depth, bytes that are not UTF-8) is exit 2 naming the line,
    /// the column and what was expected, never a guess or a trap.
    @Test func replayRefusesHostileJSONWithItsPlace() throws {
        let moon = try Moon()
        let complete = #"{"v":1,"seq":3,"ts":"2026-11-25T12:44:36.494Z","event":"complete","node":"a","duration_ms":12"#
        let cases: [(String, String)] = [
            (complete + #","node":"b"}"#, "rec.jsonl:3: not valid JSON at column 95: duplicate key 'node'"),
            (complete + #","exit_code":NaN}"#, "rec.jsonl:3: not valid JSON at column 107: expected a value, found 'N'"),
            (complete + #","outputs":"# + String(repeating: "[", count: 100_000) + "}", "rec.jsonl:3: not valid JSON at column 616: nested deeper than 512 levels"),
            (complete + #","command":"a\#u{1}"}"#, "rec.jsonl:3: not valid JSON at column 107: a control character in a string must be escaped (\\u0001)"),
        ]
        for (third, message) in cases {
            try moon.write("rec.jsonl", Self.recording[0] + "\n" + Self.recording[1] + "\n" + third + "\n")
            let result = try moon.run(["replay", "rec.jsonl"])
            #expect(result.status == 2, "\(message): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        // Bytes that are not UTF-8 inside a string: refused, not replaced by U+FFFD.
        let bad = try shell(#"printf '%s\n%s\n{"v":1,"seq":3,"ts":"2026-11-25T12:44:36.494Z","event":"skip","node":"\377","reason":"up-to-date"}\n' "$A" "$B" > bad.jsonl; "$MOON" replay bad.jsonl"#,
                            in: moon, environment: ["A": Self.recording[0], "B": Self.recording[1]])
        #expect(bad.status == 2, "\(bad.status) \(bad.stderr)")
        #expect(bad.stderr.contains("bad.jsonl:3: not valid JSON at column 70: a string that is not valid UTF-8"), "\(bad.stderr)")
    }

    /// Every number of every event, set to values at and past the edges of
    /// Int32, Int64 and a double: replay ends with 0, 1 or 2, never a trap.
    @Test func replaySurvivesExtremeNumbersInEveryField() throws {
        let moon = try Moon()
        let extremes = ["2147483648", "-2147483649", "4294967296", "-1", "9007199254740993", "9223372036854775807",
                        "-9223372036854775808", "18446744073709551616", "1e300", "-1e300", "0"]
        let number = try NSRegularExpression(pattern: #"("[a-z_]+"):(-?[0-9]+)"#)
        var files: [String] = []
        for (lineIndex, line) in Self.recording.enumerated() {
            let matches = number.matches(in: line, range: NSRange(line.startIndex..., in: line))
            for (matchIndex, match) in matches.enumerated() {
                for (valueIndex, value) in extremes.enumerated() {
                    let range = Range(match.range(at: 2), in: line)!
                    var changed = Self.recording
                    changed[lineIndex] = line.replacingCharacters(in: range, with: value)
                    let name = "r\(lineIndex)-\(matchIndex)-\(valueIndex).jsonl"
                    try moon.write(name, changed.joined(separator: "\n") + "\n")
                    files.append(name)
                }
            }
        }
        #expect(files.count > 150)
        let result = try shell("for f in r*.jsonl; do \"$MOON\" replay \"$f\" >/dev/null 2>&1; echo \"$f $?\"; done",
                               in: moon, limit: 300)
        let failures = result.stdout.split(separator: "\n").filter { line in
            guard let code = Int(line.split(separator: " ").last ?? "") else { return true }
            return ![0, 1, 2].contains(code)
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// `moon replay -` decides on each line as it arrives: a bad first line
    /// fails at once, not after the writer has sent everything (here it never stops).
    @Test func replayFromAPipeFailsOnTheFirstBadLine() throws {
        let moon = try Moon()
        let result = try shell("(echo nope; while :; do echo aaaa || exit 0; sleep 0.01; done) | \"$MOON\" replay -",
                               in: moon, bash: true, limit: 40)
        #expect(result.status == 2, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("<stdin>:1: not valid JSON"), "\(result.stderr)")
    }

    // MARK: H4: export -o into a device or a FIFO

    /// `-o` onto a character device or a FIFO writes into it; the node
    /// stays what it was (renaming a file over it replaced it, as root even
    /// `/dev/null`). A FIFO nobody reads is an error, not a hang.
    @Test func exportIntoADeviceOrFIFOLeavesItInPlace() throws {
        let moon = try Moon(graph: "version: 1\nqueues: { q: { executor: slurm } }\nnodes:\n  a: { queue: q, run: \"echo hi\" }\n")
        #expect(mkfifo(moon.path("myfifo"), 0o644) == 0)
        let haveDevice = mknod(moon.path("mynull"), S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0
        if haveDevice {
            let result = try moon.run(["export", "-o", "mynull"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.type(moon.path("mynull")) == S_IFCHR)
        }
        let lonely = try moon.run(["export", "-o", "myfifo"], limit: 30)
        #expect(lonely.status == 2, "\(lonely.stderr)")
        #expect(lonely.stderr.contains("myfifo"), "\(lonely.stderr)")
        #expect(Self.type(moon.path("myfifo")) == S_IFIFO)
        // With a reader, the script goes through the FIFO. The reader opens
        // it before moon starts (a reader started beside moon may come too
        // late, and moon rightly refuses); the script fits in the pipe.
        let reader = open(moon.path("myfifo"), O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { close(reader) }
        let written = try moon.run(["export", "-o", "myfifo"], limit: 30)
        #expect(written.status == 0, "\(written.stderr)")
        var got = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let count = read(reader, &chunk, chunk.count), count > 0 { got += chunk[..<count] }
        #expect(String(decoding: got, as: UTF8.self).contains("sbatch"))
        #expect(Self.type(moon.path("myfifo")) == S_IFIFO)
        // A regular file is still replaced, executable.
        let file = try moon.run(["export", "-o", "submit.sh"])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: moon.path("submit.sh")))
        let directory = try moon.run(["export", "-o", "."])
        #expect(directory.status == 2, "\(directory.stderr)")
    }

    static func type(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode & S_IFMT
    }

    // MARK: M3: stdout that cannot be written

    /// stdout on /dev/full: the command says so on stderr and exits 1,
    /// instead of exiting 0 having printed nothing.
    @Test(arguments: [["list"], ["graph", "--format", "json"], ["schema"], ["export"], ["history"], ["status"], ["check"]])
    func aFullStdoutIsAnError(_ arguments: [String]) throws {
        let moon = try Moon(graph: "version: 1\nqueues: { q: { executor: slurm } }\nnodes:\n  a: { queue: q, run: \"echo hi\" }\n")
        let words = arguments.map { "'\($0)'" }.joined(separator: " ")
        let result = try shell("\"$MOON\" \(words) > /dev/full", in: moon)
        #expect(result.status == 1, "moon \(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains("moon: error: cannot write to standard output: No space left on device"), "\(result.stderr)")
    }

    // MARK: M5: export texts in comments

    /// A graph name (or a node's) with a line break or an escape sequence
    /// stays on its comment line, without the control characters.
    @Test func exportKeepsGraphTextsInTheirComments() throws {
        let moon = try Moon(graph: """
            version: 1
            name: "x\\ntouch PWNED_name #\\e]0;TITLE\\a"
            queues: { q: { executor: slurm } }
            nodes:
              a:
                queue: q
                description: "d\\ntouch PWNED_desc\\e[2J"
                run: "echo hi"
            """)
        let result = try moon.run(["export"])
        #expect(result.status == 0, "\(result.stderr)")
        let script = result.stdout
        #expect(!script.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(script)")
        for line in script.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("touch") {
            Issue.record("a graph text starts a line of the script: \(line)")
        }
        #expect(script.contains("x\\ntouch PWNED_name"), "\(script)")
        let ran = try shell("PATH=$PWD/bin:$PATH; mkdir bin; printf '#!/bin/sh\\ncat >/dev/null; echo 7\\n' > bin/sbatch; chmod +x bin/sbatch; \"$MOON\" export | sh",
                            in: moon)
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED_name")))
        #expect(!ran.stdout.unicodeScalars.contains { $0.value == 0x1B }, "\(ran.stdout)")
    }

    // MARK: completion and suggestions

    /// argument-parser hands the cursor's word index over as typed: a
    /// negative or huge one completes nothing, never traps.
    @Test func completionWithAnyCursorIndexNeverTraps() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  alpha: { run: \"true\" }\n")
        for index in ["-5", "-1", "0", "1", "99", "9223372036854775807", "x", ""] {
            let result = try moon.run(["---completion", "run", "--", "positional@0", index, "-5", "moon", "a"])
            #expect(result.status < 128, "index \(index): \(result.status) \(result.stderr)")
        }
    }

    /// A suggestion for a fan-out pattern names something that exists: with
    /// a fan-out `a` and a node `b`, `a[]` was answered "did you mean 'b[]'?".
    @Test func aFanOutSuggestionNamesSomethingThatExists() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              b: { run: "true" }
              a: { needs: b, for-each: "${{ needs.b.outputs.items }}", run: "echo ${{ item }}" }
            """)
        for word in ["a[]", "a[x]", "a[*]"] {
            let result = try moon.run(["run", "-n", word])
            #expect(result.status == 2)
            #expect(!result.stderr.contains("did you mean 'b["), "\(result.stderr)")
        }
        let typo = try moon.run(["run", "-n", "bb"])
        #expect(typo.stderr.contains("did you mean 'b'?"), "\(typo.stderr)")
    }
}
