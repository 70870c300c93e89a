import Foundation
import MoonEvents

/// Plain lines for pipes and CI logs: no cursor movement, one line per
/// event that matters, and colour as `ColorPolicy` decides: none in a pipe
/// unless asked for (`--color always`, `FORCE_COLOR`: `moon run --color
/// always | less -R`, a CI log that renders colour), as `ls`, `grep` and
/// cargo do. Each output line is attributed to its node
/// (`build │ text`); a line marks each success (`✓ build 1.2s`), failure,
/// retry and skip, and with -v each start; the run ends with the summary
/// (failed nodes with their command and last lines, critical path, slowest
/// nodes, counts and wall time). The output depends only on the events, so
/// golden files of it are stable.
public final class PlainReporter: Reporter {
    public typealias Verbosity = MoonReport.Verbosity

    private let sink: OutputSink
    private let verbosity: Verbosity
    private let outputMode: NodeOutputMode
    /// Escape sequences for the styles (and the nodes' own colours kept).
    private let color: Bool
    private var ledger = RunLedger()
    /// Grouped mode: each running node's output, printed when it ends.
    private var groups: [String: [String]] = [:]
    private var summarized = false

    public init(sink: OutputSink, verbosity: Verbosity = .normal, outputMode: NodeOutputMode = .prefixed, color: Bool = false) {
        self.sink = sink
        self.verbosity = verbosity
        self.outputMode = outputMode
        self.color = color
    }

    public func report(_ event: RunEvent) {
        // A line still being written is printed when it ends, as every line.
        if event.partial { return }
        ledger.apply(event)
        let loud = verbosity != .quiet
        switch event.kind {
        case .graphStart(let graph, let nodes, _):
            if loud { line(EventText.header(graph: graph, nodes: nodes.count)) }
        case .start(let node, _, let attempt, let command, _):
            if verbosity == .verbose { EventText.started(node: node, attempt: attempt, command: command).forEach { line($0) } }
        case .next(let node, let stream, let text, _):
            guard loud else { return }
            let rendered = EventText.output(node: node, stream: stream, text: text, color: color).rendered(color: color)
            if outputMode == .grouped {
                groups[node, default: []].append(rendered)
            } else {
                write(rendered + "\n")
            }
        case .retry(let node, let attempt, let delay, let error):
            flushGroup(node)
            if loud { line(EventText.retry(node: node, attempt: attempt, delayMilliseconds: delay, error: error)) }
        case .complete(let node, _, _, _), .error(let node, _, _):
            flushGroup(node)
            for ended in EventText.ending(event, ledger: ledger, verbosity: verbosity) { line(ended) }
        case .skip:
            for ended in EventText.ending(event, ledger: ledger, verbosity: verbosity) { line(ended) }
        case .expand:
            break
        case .graphComplete:
            summarize()
        case .watch(let changed, let nodes):
            line(EventText.watch(changed: changed, nodes: nodes))
        }
    }

    /// Ends a stream that stopped before `graph-complete` with a line saying so.
    public func finish() {
        if !summarized && ledger.started != nil { summarize() }
    }

    private func summarize() {
        summarized = true
        for node in groups.keys.sorted() { flushGroup(node) }
        // Appended one by one: `joined()` over an array of Strings costs the
        // runtime's generic lookups at its first call in the process.
        var text = ""
        for line in RunSummary.lines(ledger, verbosity: verbosity, color: color) {
            text += line.rendered(color: color)
            text += "\n"
        }
        write(text)
    }

    private func flushGroup(_ node: String) {
        // (Most runs group nothing: no hashing of the node's name then.)
        guard !groups.isEmpty, let lines = groups.removeValue(forKey: node), !lines.isEmpty else { return }
        write(lines.map { $0 + "\n" }.joined())
    }

    private func line(_ styled: StyledLine) {
        var text = styled.rendered(color: color)
        text.append("\n")
        write(text)
    }

    private func write(_ text: String) {
        sink.write(text)
    }
}
