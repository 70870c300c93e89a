import Foundation
import ArgumentParser
import MoonCommand
import MoonReport
import MoonSession

extension ColorPolicy.Choice: ExpressibleByArgument {}
extension NodeOutputMode: ExpressibleByArgument {}
extension ReportSettings.Output: ExpressibleByArgument {}

/// How `moon run` and `moon replay` show a run: the same options, the same
/// values (`ReportSettings`), and one place that turns them into a reporter.
struct ReportOptions: ParsableArguments {
    @Option(help: "How to report: auto (tty on a terminal, else plain), tty, plain or json.")
    var output: ReportSettings.Output = ReportSettings().output

    @Flag(help: "Events as JSON Lines on stdout (same as --output json); moon run refuses it for a dry run, which has none.")
    var json = false

    @Option(help: "Colour: auto (on a terminal), always (also into pipes) or never (NO_COLOR also turns it off).")
    var color: ColorPolicy.Choice = ReportSettings().color

    @Option(name: .customLong("output-mode"), help: "prefixed (each line as it comes, with its node) or grouped (each node's output together when it ends).")
    var outputMode: NodeOutputMode = ReportSettings().outputMode

    @Flag(name: .shortAndLong, help: "Show only failures and the summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also show each command (every line, its values put in) as it starts.")
    var verbose = false

    func validate() throws { try settings.validate() }

    var settings: ReportSettings {
        ReportSettings(output: output, json: json, color: color, outputMode: outputMode, quiet: quiet, verbose: verbose)
    }
}

/// The values of `ReportOptions`, as a plain value: what `moon run`'s fast
/// path (`FastLine`) fills in without swift-argument-parser.
struct ReportSettings: Equatable {
    enum Output: String, CaseIterable {
        case auto, tty, plain, json
    }

    var output = Output.auto
    var json = false
    var color = ColorPolicy.Choice.auto
    var outputMode = NodeOutputMode.prefixed
    var quiet = false
    var verbose = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
    }

    /// Whether events go out as JSON Lines.
    var isJSON: Bool { json || output == .json }

    var verbosity: Verbosity { quiet ? .quiet : verbose ? .verbose : .normal }

    /// The reporter these options ask for, writing to `sink` and called on
    /// `scheduler` (which also drives the terminal view's redraws).
    func reporter(sink: OutputSink, scheduler: DateScheduler, stallAfter: Duration = .seconds(30)) -> Reporter {
        let color = Terminal.color(color, fd: sink.fd)
        if isJSON { return JSONLinesReporter(sink: sink) }
        if showsTerminal(fd: sink.fd) {
            let options = TTYReporter.Options(verbosity: verbosity, outputMode: outputMode, color: color, stallAfter: stallAfter)
            return TTYReporter(sink: sink, options: options, scheduler: scheduler)
        }
        return PlainReporter(sink: sink, verbosity: verbosity, outputMode: outputMode, color: color)
    }
}

extension ReportSettings: ReportChoice {
    func showsTerminal(fd: Int32) -> Bool {
        output == .tty || (output == .auto && isatty(fd) == 1)
    }
}
