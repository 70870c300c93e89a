import ArgumentParser
import Foundation
import Testing
@testable import moon

/// `FastLine` reads `moon run`'s common command lines without
/// argument-parser; `RunCommand` is the one definition of that command line.
/// These hold the two together: every option argument-parser knows of `run`
/// is read by the fast path in every spelling, to the same `RunRequest`,
/// and whatever the fast path does not take it leaves to argument-parser.
@Suite struct FastLineTests {
    /// What argument-parser makes of `arguments`, as a `FastLine`: nil when it
    /// refuses them (help, version, an error) or reads another subcommand.
    static func parsed(_ arguments: [String]) -> FastLine? {
        guard let (command, passthrough) = try? Moon.parse(arguments) else { return nil }
        if let run = command as? RunCommand { return .run(run.request(passthrough: passthrough)) }
        if command is Moon { return .defaultNodes }
        return nil
    }

    /// The fast path reads `arguments` as argument-parser does.
    static func expectRead(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = parsed(arguments)
        #expect(expected != nil, "argument-parser refuses \(arguments)", sourceLocation: sourceLocation)
        #expect(FastLine.read(arguments) == expected, "\(arguments)", sourceLocation: sourceLocation)
    }

    /// The fast path leaves `arguments` to argument-parser.
    static func expectLeft(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(FastLine.read(arguments) == nil, "\(arguments): \(String(describing: FastLine.read(arguments)))",
                sourceLocation: sourceLocation)
    }

    /// `run`'s options as argument-parser defines them (`moon run --experimental-dump-help`):
    /// each as its spellings (`-j`, `--jobs`) and whether it takes a value.
    static func definedOptions() throws -> [(spellings: [String], takesValue: Bool)] {
        var dump = ""
        do {
            _ = try Moon.parseAsRoot(["run", "--experimental-dump-help"])
        } catch {
            dump = Moon.fullMessage(for: error)
        }
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        let command = try #require(tool["command"] as? [String: Any])
        #expect(command["commandName"] as? String == "run")
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        return arguments.compactMap { argument in
            guard let kind = argument["kind"] as? String, kind != "positional",
                  let names = argument["names"] as? [[String: Any]] else { return nil }
            let spellings = names.map { name in
                (name["kind"] as? String == "long" ? "--" : "-") + (name["name"] as? String ?? "")
            }
            return (spellings, kind == "option")
        }
    }

    /// Options argument-parser adds to every command and keeps to itself.
    static let parsersOwn: Set<String> = ["-h", "--help", "--version"]

    /// A valid value for each option of `run` that takes one, by its last
    /// spelling; an option added to `run` needs one here (and in `FastLine.options`).
    static let samples: [String: String] = [
        "--jobs": "3", "--output": "plain", "--color": "never", "--output-mode": "grouped", "--timeout": "10m",
        "--grace": "250ms", "--set": "greeting=hi", "--cache-dir": "/tmp/moon-cache", "--remote-cache": "http://cache.example/moon",
        "--exclude": "test[*]", "--watch-debounce": "200ms", "--watch-poll": "2s", "--stall-after": "0", "--memory": "900M",
        "--trace": "trace.json",
    ]

    /// What an option needs beside it to be valid.
    static let companions: [String: [String]] = ["--watch-poll": ["--watch"]]

    @Test func theSubcommandNamesAreArgumentParsers() {
        #expect(Moon.commandNames == Moon.configuration.subcommands.map { $0._commandName })
    }

    @Test func theFastPathKnowsEveryOptionOfRunAndNoOther() throws {
        let defined = try Self.definedOptions()
        let parsers = Set(defined.flatMap(\.spellings)).subtracting(Self.parsersOwn)
        let fast = Set(FastLine.options.flatMap(\.names))
        #expect(parsers.subtracting(fast).isEmpty, "options of run the fast path does not read: \(parsers.subtracting(fast).sorted())")
        #expect(fast.subtracting(parsers).isEmpty, "options the fast path reads that run does not have: \(fast.subtracting(parsers).sorted())")
        for option in defined where !Self.parsersOwn.isSuperset(of: option.spellings) {
            let fastOption = FastLine.options.first { $0.names.contains(option.spellings[0]) }
            #expect(fastOption?.names.sorted() == option.spellings.sorted(), "\(option.spellings)")
            #expect(fastOption?.takesValue == option.takesValue, "\(option.spellings)")
        }
    }

    /// Each spelling of each option (`-j 3`, `-j3`, `--jobs 3`, `--jobs=3`,
    /// a flag alone), after `run` and without it, alone and among nodes and
    /// words after `--`, reads as argument-parser reads it.
    @Test func everySpellingOfEveryOptionReadsAsArgumentParserReadsIt() throws {
        for option in try Self.definedOptions() where !Self.parsersOwn.isSuperset(of: option.spellings) {
            let companions = Self.companions[option.spellings.last!] ?? []
            var lines: [[String]] = []
            if option.takesValue {
                let value = try #require(Self.samples[option.spellings.last!], "no sample value for \(option.spellings)")
                for spelling in option.spellings {
                    lines.append([spelling, value])
                    if spelling.hasPrefix("--") { lines.append([spelling + "=" + value]) }
                }
            } else {
                lines = option.spellings.map { [$0] }
            }
            for line in lines {
                let line = companions + line
                Self.expectRead(["run"] + line)
                Self.expectRead(line)
                Self.expectRead(["run", "moon.yaml", "build"] + line + ["test", "x=1", "--", "-k", "fast"])
                Self.expectRead(line + ["build"])
            }
        }
        // `-j` alone takes its value joined.
        Self.expectRead(["run", "-j8"])
        Self.expectRead(["-j8", "build"])
    }

    @Test(arguments: [
        [],
        ["run"],
        ["build"],
        ["run", "-j2", "-q", "--output", "plain", "moon.yaml"],
        ["-j2", "-q", "--output", "plain", "moon.yaml"],
        ["-kq", "build", "x=1", "--", "-k", "fast"],
        ["-kqnB", "build"],
        ["run", "--set", "a=1", "--set=b=2", "--set", "a=3", "--exclude", "t*", "--exclude=u"],
        ["run", "--set=a=", "build"],
        ["run", "--", "moon.yaml", "a"],
        ["run", "--", "-x"],
        ["run", "--", "a", "--", "b"],
        ["run", "a", "--", "b", "--", "c"],
        ["run", "a", "--"],
        ["run", "--"],
        ["--", "a"],
        ["run", "-j1", "--", "moon.yaml", "a"],
        ["run", "help"],
        ["run", "run"],
        ["run", "list"],
        ["run", "--watch", "--watch-poll", "1s", "--watch-debounce=0s", "-B"],
        ["run", "--jobs", "+4"],
        ["run", "--jobs", "08"],
        ["run", "--timeout", "1h", "--grace", "0s", "--stall-after", "1m30s"],
        ["run", "--cache-dir", "~/c", "--no-cache", "--remote-cache", "http://u:p@h:1/x", "--remote-cache-read-only"],
        ["run", "--json", "--color", "always", "--output-mode", "grouped"],
        ["run", "--output", "json", "-v"],
        ["run", "--resume", "-k", "--force-only", "a"],
    ])
    func commonLinesReadAsArgumentParserReadsThem(_ arguments: [String]) {
        Self.expectRead(arguments)
    }

    /// Lines the fast path leaves to argument-parser: its help, version and
    /// completion, other subcommands, errors (whose messages are its own), and
    /// forms it does not read although argument-parser may.
    @Test(arguments: [
        ["--help"], ["-h"], ["-help"], ["run", "--help"], ["run", "-h"], ["build", "--help"], ["--version"], ["run", "--version"],
        ["help"], ["help", "run"], ["list"], ["check"], ["status", "a"], ["graph"], ["export"], ["history"], ["schema"],
        ["replay", "x"], ["cache"],
        ["--experimental-dump-help"], ["run", "--experimental-dump-help"],
        ["--generate-completion-script", "bash"], ["--generate-completion-script=zsh"],
        ["---completion", "run", "--", "arguments", "1", "0", "moon", "run", ""],
        ["run", "--bogus"], ["run", "-x"], ["-x"], ["run", "--jbos", "2"], ["run", "-kx"],
        ["run", "--jobs", "x"], ["run", "-jx"], ["run", "-j0"], ["run", "--jobs=0"], ["run", "-j", "-1"], ["run", "-j-1"],
        ["run", "-j=2"], ["run", "-kj8"], ["run", "-jk"],
        ["run", "-j"], ["run", "--grace"], ["run", "--grace", "--json"], ["run", "--jobs="], ["run", "--jobs=", "3"],
        ["run", "--set"], ["run", "--set", "-x=1"], ["run", "--exclude", "--", "a"],
        ["run", "--json=1"], ["run", "-q=1"], ["run", "--output", "fancy"], ["run", "--color", "sometimes"],
        ["run", "--output-mode", "interleaved"],
        ["run", "--timeout", "0s"], ["run", "--timeout", "soon"], ["run", "--grace", "soon"], ["run", "--stall-after", "soon"],
        ["run", "-q", "-v"], ["run", "-qv"], ["run", "--set", "novalue"], ["run", "--set", "=x"],
        ["run", "-n", "--json"], ["run", "-n", "--output", "json"], ["run", "-n", "--watch"], ["run", "--force-only", "--watch"],
        ["run", "--watch-poll", "1s"], ["run", "--watch", "--watch-poll", "0s"], ["run", "--watch-debounce", "soon"],
        ["run", "-j2", "-j3"], ["run", "-kk"], ["run", "-q", "--quiet"], ["run", "--output", "plain", "--output", "tty"],
        ["run", "-"], ["run", ""], ["run", "--cache-dir", ""], ["run", "--cache-dir="],
    ])
    func otherLinesAreLeftToArgumentParser(_ arguments: [String]) {
        Self.expectLeft(arguments)
    }

    /// A line the fast path leaves to argument-parser gets, from the built
    /// binary, argument-parser's own text, on the stream and with the exit
    /// code `Moon.main` gives it: help on stdout and 0, an error on stderr and 2.
    @Test(arguments: [
        ["run", "--bogus"], ["--bogus", "build"], ["run", "-j0"], ["-jx", "build"], ["run", "--output", "fancy"],
        ["run", "-q", "-v"], ["build", "-j"], ["run", "--watch-poll", "1s"], ["run", "-n", "--json"],
        ["run", "--help"], ["--help"], ["-h"], ["--version"],
    ])
    func linesLeftToTheParserGetItsTextAndExitCode(_ arguments: [String]) throws {
        Self.expectLeft(arguments)
        var message = ""
        var status: Int32 = 0
        do {
            // `--help` and `-h` parse to argument-parser's help command, which throws its text.
            var (command, _) = try Moon.parse(arguments)
            try #require("\(type(of: command))" == "HelpCommand", "argument-parser reads \(arguments)")
            try command.run()
        } catch {
            message = Moon.fullMessage(for: error, columns: 80)
            let code = Moon.exitCode(for: error)
            status = code == .validationFailure ? 2 : code.rawValue
        }
        let result = try Self.runMoon(arguments)
        #expect(result.status == status, "\(arguments): \(result.stderr)")
        if status == 0 {
            #expect(result.stdout == message + "\n", "\(arguments)")
            #expect(result.stderr.isEmpty, "\(arguments): \(result.stderr)")
        } else {
            #expect(result.stderr == message + "\n", "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
    }

    /// The built binary (`MOON_BIN`, else `.build/debug/moon`), run with
    /// `arguments` in a directory of its own holding a valid graph file.
    static func runMoon(_ arguments: [String]) throws -> (stdout: String, stderr: String, status: Int32) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binary = ProcessInfo.processInfo.environment["MOON_BIN"] ?? root.appendingPathComponent(".build/debug/moon").path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-fastline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("version: 1\nnodes:\n  build: { run: [true] }\n".utf8).write(to: directory.appendingPathComponent("moon.yaml"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(["COLUMNS": "80"]) { $1 }
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes drained before the wait: help is longer than a pipe's buffer may be.
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self), process.terminationStatus)
    }

    /// Plain `moon` runs the same request as `moon run` with no words.
    @Test func plainMoonRunsTheDefaultRequest() {
        #expect(FastLine.read([]) == .defaultNodes)
        #expect(Self.parsed(["run"]) == .run(RunRequest()))
    }
}
