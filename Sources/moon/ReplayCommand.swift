import ArgumentParser
import Foundation
import MoonEvents
import MoonReport
import MoonRun
import MoonSession

/// `moon replay events.jsonl`: re-renders a recorded `moon run --json` run
/// as the terminal view or the plain log, instantly or at the recorded
/// speed, so a CI failure can be read after the fact; with `--json`, as the
/// JSON Lines it was recorded as (at the recorded speed: a stand-in run for
/// whatever reads `moon run --json`).
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Show a recorded `moon run --json` run as the terminal view or a plain log.",
        discussion: """
        moon run --json > events.jsonl    # record (e.g. in CI)
        moon replay events.jsonl          # read it later, as if it ran here

        Exit codes: 0 the recorded run succeeded, 1 it failed or the recording \
        ends before graph-complete, 2 the file cannot be read or a line is not \
        a moon event (the message names the line). A recording is a file or a \
        pipe (`-` is standard input) of at most 1 GiB, each line at most 64 MiB; \
        a device is refused.
        """)

    enum Speed: String, ExpressibleByArgument, CaseIterable {
        case instant, recorded
    }

    /// The longest pause between two events at recorded speed.
    static let maxWait: Duration = .seconds(2)

    @Argument(help: ArgumentHelp("A file written by `moon run --json` (- for standard input).", valueName: "events.jsonl"))
    var file: String

    @Option(help: "instant, or recorded: wait as long between events as the run did (each pause at most 2s).")
    var speed: Speed = .instant

    @OptionGroup var report: ReportOptions

    func run() throws {
        let events = try load()
        let code = try replay(events)
        if code != 0 { throw ExitCode(code) }
    }

    /// Shows `events` on moon's event loop, as `moon run` shows a run; a
    /// stop signal leaves a clean screen (the summary so far) and ends the
    /// replay as interrupted. Returns the exit code.
    private func replay(_ events: [EventDecoder.Decoded]) throws -> Int32 {
        let main = try MainLoop()
        let scheduler = main.loopScheduler
        let sink = OutputSink.standardOutput
        let reporter = report.settings.reporter(sink: sink, scheduler: scheduler)
        var code: Int32 = 1
        func end() {
            guard !main.isFinished else { return }
            reporter.finish()
            main.finish()
        }
        try main.onSignals(MainLoop.stopSignals) { number in
            guard !main.isFinished else { return }
            code = 128 + number
            end()
        }
        var next = 0
        func show() {
            guard !main.isFinished else { return }
            guard next < events.count, !sink.isBroken else { return end() }
            let event = events[next].event
            next += 1
            if case .graphComplete(let success, _, _, _) = event.kind { code = success ? 0 : 1 }
            reporter.report(event)
            let wait = speed == .recorded && next < events.count
                ? min(Self.maxWait, .seconds(events[next].event.time.timeIntervalSince(event.time))) : .zero
            if wait > .zero { scheduler.schedule(after: wait, show) } else { scheduler.post(show) }
        }
        main.run(show)
        return code
    }

    /// Every event of the file, or exit 2 naming the first bad line. Each
    /// line is decoded as it arrives: a pipe with a bad first line fails at
    /// once, whatever follows it.
    func load() throws -> [EventDecoder.Decoded] { try Self.load(file) }

    /// The events of recording `file` (`-`: standard input); `moon trace --from` reads one too.
    static func load(_ file: String) throws -> [EventDecoder.Decoded] {
        let name = file == "-" ? "<stdin>" : file
        let help = "moon replay reads the JSON Lines written by `moon run --json`"
        var events: [EventDecoder.Decoded] = []
        do {
            // By `InputFile`'s rules: a device is refused, a pipe is cut at
            // the cap, and so is a line at its cap; a NUL is an error.
            try InputFile.forEachLine(file == "-" ? "/dev/stdin" : file, limit: InputFile.recordingLimit,
                                      lineLimit: InputFile.recordingLineLimit, kind: "recording") { bytes, number in
                if let decoded = try EventDecoder.decodeLine(bytes, line: number) { events.append(decoded) }
            }
        } catch let refusal as InputFile.Refusal {
            throw CLIError(refusal.message)
        } catch let error as EventDecoder.DecodingError {
            throw CLIError("\(name):\(error.line): \(error.message)", help: help)
        }
        if events.isEmpty {
            throw CLIError("\(name) holds no events", help: "record a run with `moon run --json > \(name)`")
        }
        return events
    }
}
