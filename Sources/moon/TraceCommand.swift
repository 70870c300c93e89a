import ArgumentParser
import Foundation
import MoonEvents
import MoonReport
import MoonSession
import MoonState

/// `moon trace [FILE] [--run N | --from RECORDING]`: the picture of a run,
/// as a Chrome trace (Perfetto, `chrome://tracing`) or one HTML page with a
/// timeline: where the time went, lane by lane, and which nodes held the
/// run up (the critical path).
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Write a run as a Chrome trace or an HTML timeline: every attempt on a lane of its queue, the critical path, the needs.",
        discussion: """
        Without --run or --from: the last run of the graph that ran something (moon history lists them; the newest \
        \(StateStore.traceLimit) keep their trace). --from reads a recording of `moon run --json` instead (the graph \
        file, when there is one, gives the arrows for needs).

        chrome: the trace-event JSON that Perfetto and chrome://tracing load: a process per queue, a thread per slot, \
        a complete event per attempt (args: result, exit code, attempt, wait, CPU and memory when measured, command), \
        the critical path again as a process of its own, flow arrows for needs, restores from the cache as instant events.
        html: one self-contained page (no network) with a zoomable timeline and a table of the nodes, slowest first.

        moon trace -o run.html                 # the last run, as a page (the .html picks the format)
        moon trace --run 12 -o trace.json      # run #12 of moon history
        moon trace --from events.jsonl --format html -o ci.html
        moon run --trace trace.json            # write it while the run goes (for CI)
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case chrome, html
    }

    @Argument(help: "The graph file (default: the nearest moon.yaml or moon.yml, here or above).")
    var file: String?

    @Option(name: .customLong("run"), help: ArgumentHelp("The run to draw, by its number in moon history (default: the last).", valueName: "N"))
    var runNumber: Int?

    @Option(name: .customLong("from"), help: ArgumentHelp("Draw a recording of moon run --json instead of the history (- for standard input).",
                                                        valueName: "recording"))
    var recording: String?

    @Option(help: "chrome (trace-event JSON) or html (default: html when --output ends in .html, else chrome).")
    var format: Format?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write to this file (default: standard output).", valueName: "path"))
    var output: String?

    func validate() throws {
        if runNumber != nil && recording != nil { throw ValidationError("--run draws a run of the history and --from a recording: give one of them") }
        if let runNumber, runNumber < 1 { throw ValidationError("--run takes a run's number as moon history shows it (#12: --run 12), got \(runNumber)") }
        if output?.isEmpty == true { throw ValidationError("--output needs a file path") }
        if let file, recording == nil, file.hasSuffix(".jsonl") {
            throw ValidationError("\(file) looks like a recording of moon run --json, not a graph file: draw it with --from \(file)")
        }
    }

    func run() throws {
        let model = try recording.map(fromRecording) ?? fromHistory()
        let chosen = format ?? (output.map { $0.lowercased().hasSuffix(".html") || $0.lowercased().hasSuffix(".htm") } == true ? .html : .chrome)
        let text = chosen == .html ? TraceHTML.document(model) : TraceChrome.document(model)
        guard let output, output != "-" else { return Console.write(text) }
        let graphPath = file.flatMap { $0.hasSuffix(".jsonl") ? nil : $0 } ?? (try? GraphFileLocator.defaultFile())
        try OutputPath.refuseToReplace(output, graphPath: graphPath, writes: "-o")
        try OutputPath.write(text, to: output, permissions: 0o644)
    }

    /// The trace of a recording; the graph file, when one is found, gives the needs.
    private func fromRecording(_ path: String) throws -> TraceModel {
        let events = try ReplayCommand.load(path).map(\.event)
        var needs: [String: [String]] = [:]
        if let file {
            needs = TraceNeeds.of(try GraphFile.load(file).graph)
        } else if let found = try? GraphFileLocator.discovered(), let graph = try? GraphFile.load(found).graph {
            needs = TraceNeeds.of(graph)
        }
        guard let model = TraceBuilder.model(of: events, needs: needs) else {
            throw CLIError("\(path == "-" ? "<stdin>" : path) has no graph-start event: it is not the recording of a run",
                           help: "record a run with `moon run --json > events.jsonl`")
        }
        return model
    }

    /// The trace the history kept of run `--run` (default: the last).
    private func fromHistory() throws -> TraceModel {
        let path = try file ?? GraphFileLocator.defaultFile()
        let graph = try GraphFile.load(path).graph
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let key = StateStore.graphKey(forGraphAt: graph.path)
        do {
            guard let store = opened.store, let found = try store.trace(graph: key, run: runNumber.map(Int64.init)) else {
                guard let runNumber else {
                    throw CLIError("no run of \(path) with a trace recorded yet", help: "run it first (moon run), or draw a recording with --from",
                                   exitCode: 1)
                }
                if try opened.store?.hasRun(graph: key, id: Int64(runNumber)) == true {
                    throw CLIError("run #\(runNumber) of \(path) has no trace kept (the newest \(StateStore.traceLimit) runs keep theirs)",
                                   exitCode: 1)
                }
                throw CLIError("no run #\(runNumber) of \(path) in the history", help: "moon history lists the runs and their numbers", exitCode: 1)
            }
            return try TraceRecordText.decode(found.trace)
        } catch let error as TraceRecordText.DecodingError {
            throw CLIError("\(error) in \(opened.store?.path ?? "the state store")", exitCode: 1)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("cannot read the history (\(StateStore.reason(error)))", exitCode: 1)
        }
    }
}
