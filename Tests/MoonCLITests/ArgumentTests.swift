import Foundation
import MoonEvents
import Testing

/// swift-argument-parser reads every command line; these hold what a user
/// types: every option of `moon run` in each spelling reaches the run, bad
/// values exit 2 with the parser's message, and `run` and `replay` share
/// their reporting options and their stop signals.
@Suite struct ArgumentTests {
    static let graph = """
        version: 1
        vars: { greeting: hello }
        nodes:
          a: { run: "echo ${{ vars.greeting }}" }
          b: { needs: a, run: "echo b" }
        """

    /// Three independent nodes that fail when two of them overlap: they
    /// pass exactly when `-j 1` reached the scheduler.
    static let exclusive = """
        version: 1
        nodes:
          a: { run: "mkdir lock && sleep 0.2 && rmdir lock" }
          b: { run: "mkdir lock && sleep 0.2 && rmdir lock" }
          c: { run: "mkdir lock && sleep 0.2 && rmdir lock" }
        """

    @Test(arguments: [["-j1"], ["-j", "1"], ["--jobs=1"], ["--jobs", "1"], ["-k", "-j1", "-q"], ["-qk", "--jobs", "1"]])
    func everySpellingOfJobsReachesTheScheduler(_ jobs: [String]) throws {
        let moon = try Moon(graph: Self.exclusive)
        let result = try moon.run(["run", "--output", "plain"] + jobs)
        #expect(result.status == 0, "\(jobs): \(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("3 succeeded"), "\(jobs): \(result.stdout)")
    }

    @Test(arguments: [
        ["run"],
        ["run", "moon.yaml"],
        ["run", "-j", "2", "--output", "plain", "-q", "moon.yaml"],
        ["run", "-j2", "moon.yaml", "a"],
        ["run", "--jobs=3", "-kq", "--set", "greeting=hi", "moon.yaml"],
        ["run", "--set=greeting=hi", "--timeout", "1m", "--grace", "1s", "--color", "never", "a"],
        ["run", "--output-mode", "grouped", "--stall-after", "1s", "-B", "--json"],
        ["run", "-n"],
        ["run", "-n", "-j4"],
        ["run", "--", "moon.yaml"],
        ["run", "--output=json", "-vB", "--set", "greeting=a", "--set", "greeting=b", "moon.yaml", "b", "a"],
        ["run", "a", "--keep-going", "--dry-run", "--force", "--quiet", "--color=always", "--output-mode=prefixed"],
        ["run", "--stall-after=0", "--timeout=90s", "--grace=250ms", "-j", "1", "--output", "tty"],
        ["run", "-q", "-q"],
        ["run", "--exclude", "b"],
        ["run", "--exclude=b", "a", "b"],
        ["run", "a*", "-j1"],
        ["run", "b", "--", "--words", "for", "b"],
        ["run", "moon.yaml", "b", "--", "-x"],
        ["run", "-j1", "--", "moon.yaml", "a"],
    ])
    func usualCommandLinesRun(_ arguments: [String]) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }

    @Test(arguments: [
        (["run", "--jobs", "x"], "The value 'x' is invalid for '--jobs <jobs>'"),
        (["run", "-jx"], "The value 'x' is invalid for '-j <jobs>'"),
        (["run", "-j0"], "--jobs must be at least 1, got 0"),
        (["run", "--jobs", "0", "moon.yaml"], "--jobs must be at least 1, got 0"),
        (["run", "-j"], "Missing value for '-j'"),
        (["run", "--output", "fancy"], "The value 'fancy' is invalid for '--output <output>'"),
        (["run", "--timeout", "-5s"], "--timeout"),
        (["run", "--timeout", "0s"], "--timeout must be longer than 0s"),
        (["run", "--grace", "soon"], "--grace: 'soon' is not a duration"),
        (["run", "--stall-after", "soon"], "--stall-after: 'soon' is not a duration"),
        (["run", "-q", "-v"], "--quiet and --verbose cannot be used together"),
        (["run", "--set", "novalue"], "--set expects KEY=VALUE, got 'novalue'"),
        (["run", "-n", "--json"], "--dry-run prints the plan as text"),
        (["run", "-n", "--output", "json"], "--dry-run prints the plan as text"),
        (["run", "--jbos", "2", "moon.yaml"], "--jbos"),
        (["replay", "-q", "-v", "events.jsonl"], "--quiet and --verbose cannot be used together"),
        (["replay", "--output", "fancy", "events.jsonl"], "The value 'fancy' is invalid for '--output <output>'"),
    ])
    func badCommandLinesExitTwoWithTheParsersMessage(_ arguments: [String], _ message: String) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        // Usage is that of the subcommand, named from the root command.
        #expect(result.stderr.contains("moon \(arguments[0])"), "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [["run", "--json", "--set", "greeting=hi", "a"], ["run", "--json", "--set=greeting=hi", "a"]])
    func setValuesReachTheGraph(_ arguments: [String]) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(arguments)
        #expect(result.events("next", node: "a").first?.text == "hi", "\(result.stdout)")
    }

    /// Help reads no graph: an invalid file in the directory does not matter.
    @Test func helpReadsNoGraph() throws {
        let moon = try Moon(graph: "not: [a, graph")
        for arguments in [["run", "--help"], ["help", "run"], ["replay", "--help"]] {
            let result = try moon.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains("USAGE: moon \(arguments.contains("replay") ? "replay" : "run")"), "\(result.stdout)")
        }
    }

    @Test func anInvalidGraphIsReportedWithItsLocation() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { needs: zz, run: true }\n")
        let result = try moon.run(["run", "-j", "2"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:3:"), "\(result.stderr)")
        #expect(result.stderr.contains("needs unknown node 'zz'"))
    }

    /// Every option `moon run --help` lists is accepted with a sample value:
    /// an option added to `moon run` must be added here, with a value.
    @Test func everyOptionOfRunIsAccepted() throws {
        let values = ["--jobs": "2", "--output": "plain", "--color": "never", "--timeout": "1m", "--grace": "1s",
                      "--set": "greeting=hi", "--output-mode": "grouped", "--stall-after": "1s", "--exclude": "b",
                      "--cache-dir": "cache", "--remote-cache": "http://127.0.0.1:9/cache", "--memory": "1G",
                      "--trace": "trace.json"]
        let flags: Set<String> = ["--keep-going", "--dry-run", "--json", "--force", "--quiet", "--verbose", "--no-cache", "--resume", "--remote-cache-read-only", "--force-only", "--yes"]
        let moon = try Moon(graph: Self.graph)
        let help = try moon.run(["run", "--help"]).stdout
        let listed = Set(help.split(separator: "\n").flatMap { $0.split(separator: " ") }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }.filter { $0.hasPrefix("--") && $0.count > 2 })
        // Watch mode runs until Ctrl-C: WatchTests runs its options.
        let watchOptions: Set<String> = ["--watch", "--watch-debounce", "--watch-poll"]
        #expect(listed.subtracting(["--help", "--version"]).subtracting(watchOptions) == Set(values.keys).union(flags),
                "moon run --help lists \(listed.sorted())")
        for arguments in flags.map({ [$0] }) + values.map({ [$0.key, $0.value] }) {
            let result = try moon.run(["run"] + arguments + ["moon.yaml"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
    }

    /// `moon replay --json` (or `--output json`, as for run) writes the
    /// recording's events as `moon run --json` wrote them.
    @Test(arguments: [["--json"], ["--output", "json"]])
    func replayAsJSONGivesTheRecordingBack(_ output: [String]) throws {
        let moon = try Moon(graph: Self.graph)
        let recorded = try moon.run(["run", "--json"])
        try moon.write("events.jsonl", recorded.stdout)
        let replayed = try moon.run(["replay", "events.jsonl"] + output)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout == recorded.stdout)
    }

    /// A recording whose events are 2 s apart: a minute at recorded speed.
    static var slowRecording: String {
        var seq = 0
        func event(_ second: Int, _ fields: String) -> String {
            seq += 1
            return #"{"v":1,"seq":\#(seq),"ts":"2026-01-01T00:\#(String(format: "%02d:%02d", second / 60, second % 60)).000Z",\#(fields)}"#
        }
        var lines = [event(0, #""event":"graph-start","graph":"moon","nodes":1,"plan":["slow"],"queues":{"default":1}"#),
                     event(0, #""event":"start","node":"slow","queue":"default","attempt":1,"command":"tick""#)]
        for tick in 1...30 { lines.append(event(2 * tick, #""event":"next","node":"slow","stream":"stdout","text":"tick \#(tick)""#)) }
        lines.append(event(62, #""event":"complete","node":"slow","duration_ms":62000,"exit_code":0,"outputs":{}"#))
        return lines.joined(separator: "\n") + "\n"
    }

    /// `moon replay` stops on the signals that stop `moon run`: it shows
    /// what it has so far and exits 128 + the signal.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func replayStopsCleanlyOnTheSignalsThatStopARun(_ signal: Int32) throws {
        let moon = try Moon()
        try moon.write("slow.jsonl", Self.slowRecording)
        let running = try moon.start(["replay", "--speed", "recorded", "--output", "plain", "slow.jsonl"])
        #expect(eventually(20) { (moon.read(running.out.lastPathComponent) ?? "").contains("tick 1") })
        running.signal(signal)
        let result = try running.wait(limit: 30)
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(result.stdout.contains("moon: incomplete - the events end before graph-complete"), "\(result.stdout)")
        #expect(!result.stdout.contains("tick 30"))
    }
}
