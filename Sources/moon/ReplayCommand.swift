import ArgumentParser
import Dispatch
import Foundation
import MoonCommand
import MoonReport
import MoonRun

extension ColorPolicy.Choice: ExpressibleByArgument {}
extension NodeOutputMode: ExpressibleByArgument {}

/// `moon replay events.jsonl`: re-renders a recorded `moon run --json` run
/// as the terminal view or the plain log, instantly or at the recorded
/// speed, so a CI failure can be read after the fact.
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
        pipe (`-` is standard input) of at most 1 GiB; a device is refused.
        """)

    enum Speed: String, ExpressibleByArgument, CaseIterable {
        case instant, recorded
    }

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case auto, tty, plain
    }

    /// The longest pause between two events at recorded speed.
    static let maxWait: TimeInterval = 2

    @Argument(help: ArgumentHelp("A file written by `moon run --json` (- for standard input).", valueName: "events.jsonl"))
    var file: String

    @Option(help: "instant, or recorded: wait as long between events as the run did (each pause at most 2s).")
    var speed: Speed = .instant

    @Option(help: "auto (tty on a terminal, else plain), tty or plain.")
    var output: Output = .auto

    @Option(name: .customLong("output-mode"), help: "prefixed (each line as it came) or grouped (each node's output together).")
    var outputMode: NodeOutputMode = .prefixed

    @Option(help: "Colour: auto (on a terminal), always (also into pipes) or never (NO_COLOR also turns it off).")
    var color: ColorPolicy.Choice = .auto

    @Flag(name: .shortAndLong, help: "Show only failures and the summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also show each command as it starts.")
    var verbose = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
    }

    func run() throws {
        let events = try load()
        signal(SIGPIPE, SIG_IGN)
        let queue = DispatchQueue(label: "moon.replay")
        let sink = OutputSink.standardOutput
        let verbosity: Verbosity = quiet ? .quiet : verbose ? .verbose : .normal
        let environment = ProcessInfo.processInfo.environment
        let tty = output == .tty || (output == .auto && isatty(1) == 1)
        let reporter: Reporter
        let colors = ColorPolicy.resolve(color, environment: environment, fd: 1)
        if tty {
            reporter = TTYReporter(sink: sink, options: TTYReporter.Options(verbosity: verbosity, outputMode: outputMode, color: colors.enabled),
                                   scheduler: QueueScheduler(queue: queue))
        } else {
            reporter = PlainReporter(sink: sink, verbosity: verbosity, outputMode: outputMode, color: colors.enabled)
        }

        // Ctrl-C: leave a clean screen (the summary so far), then exit as interrupted.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: queue)
        interrupt.setEventHandler {
            reporter.finish()
            Foundation.exit(130)
        }
        interrupt.resume()

        var previous: Date?
        var ok = false
        for decoded in events {
            if sink.isBroken { break }
            let event = decoded.event
            if speed == .recorded, let previous {
                let wait = min(Self.maxWait, event.time.timeIntervalSince(previous))
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            }
            previous = event.time
            if case .graphComplete(let success, _, _, _) = event.kind { ok = success }
            queue.sync { reporter.report(event) }
        }
        queue.sync {
            interrupt.cancel()
            reporter.finish()
        }
        if !ok { throw MoonExit.failure }
    }

    /// Every event of the file, or exit 2 naming the first bad line.
    func load() throws -> [EventDecoder.Decoded] {
        let name = file == "-" ? "<stdin>" : file
        // By `InputFile`'s rules: a device is refused, a pipe is cut at the cap.
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(file == "-" ? "/dev/stdin" : file, limit: InputFile.recordingLimit, kind: "recording", stopAtNUL: true)
        } catch {
            throw CLIError(error.message)
        }
        if let problem = InputFile.binaryProblem(name, bytes) {
            throw CLIError(problem, help: "moon replay reads the JSON Lines written by `moon run --json`")
        }
        do {
            let events = try EventDecoder.decodeAll(String(decoding: bytes, as: UTF8.self))
            if events.isEmpty {
                throw CLIError("\(name) holds no events", help: "record a run with `moon run --json > \(name)`")
            }
            return events
        } catch let error as EventDecoder.DecodingError {
            throw CLIError("\(name):\(error.line): \(error.message)",
                           help: "moon replay reads the JSON Lines written by `moon run --json`")
        }
    }
}
