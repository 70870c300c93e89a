import ArgumentParser
import Foundation
import MoonEvents
import MoonGraph
import MoonSession
import MoonState

/// `moon history [FILE]`: the recent runs of a graph, newest first.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show the recent runs of a graph, newest first.",
        discussion: """
        Every run that ran something (not a no-op) records, per node, when it started, how long it took, how it ended, \
        how many attempts it made and what its processes used (CPU time, peak memory), in .moon/state.db beside the \
        graph file (the newest \(StateStore.historyLimit) runs are kept); a run that changed nothing else there appends \
        its record to .moon/history.journal, which this command moves into the store. moon run uses the durations \
        for its critical-path priority. --node NAME shows one node over the recent runs. moon trace --run N draws \
        run #N as a timeline.
        """)

    @Argument(help: "The graph file (default: the nearest moon.yaml or moon.yml, here or above).")
    var file: String?

    @Option(name: [.customShort("n"), .long], help: "How many runs to show.")
    var limit = 10

    @Flag(name: .long, help: "Also show each node of each run.")
    var nodes = false

    @Option(name: .long, help: ArgumentHelp("Show one node over the recent runs: duration, CPU, peak memory, result.", valueName: "name"))
    var node: String?

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1, got \(limit)") }
    }

    func run() throws {
        let path = try file ?? GraphFileLocator.defaultFile()
        let graph = try GraphFile.load(path).graph
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let key = StateStore.graphKey(forGraphAt: graph.path)
        let runs: [RunRecord]
        do {
            runs = try opened.store?.recentRuns(graph: key, limit: limit) ?? []
        } catch {
            warn("cannot read the history (\(StateStore.reason(error)))")
            throw ExitCode.failure
        }
        guard !runs.isEmpty else {
            Console.line("no runs of \(path) recorded yet")
            return
        }
        let idWidth = runs.map { String($0.id).count }.max()! + 1
        if let node { return showNode(node, of: runs, idWidth: idWidth, path: path) }
        for run in runs {
            var counts: [String] = []
            if run.succeeded > 0 { counts.append("\(run.succeeded) succeeded") }
            if run.failed > 0 { counts.append("\(run.failed) failed") }
            if run.upToDate > 0 { counts.append("\(run.upToDate) up to date") }
            if run.skipped > 0 { counts.append("\(run.skipped) skipped") }
            if run.canceled > 0 { counts.append("\(run.canceled) canceled") }
            if counts.isEmpty { counts.append("nothing ran") }
            let id = ("#" + String(run.id)).padding(toLength: idWidth, withPad: " ", startingAt: 0)
            let status = (run.ok ? "ok" : run.interrupted ? "interrupted" : "FAILED").padding(toLength: 11, withPad: " ", startingAt: 0)
            let duration = DurationText.format(.milliseconds(run.durationMilliseconds), .measured).leftPadded(to: 7)
            Console.line("\(id)  \(DateText.human(run.startedAt))  \(status) \(duration)  \(counts.joined(separator: ", "))\(run.forced ? " (--force)" : "")")
            guard nodes else { continue }
            let width = run.nodes.map(\.node.count).max() ?? 0
            for node in run.nodes {
                var text = node.result.rawValue
                if let ms = node.durationMilliseconds { text += " " + DurationText.format(.milliseconds(ms), .measured) }
                if node.attempts > 1 { text += " (\(node.attempts) attempts)" }
                if let cpu = node.cpuMilliseconds, let rss = node.maxRSSBytes {
                    text += ", CPU " + DurationText.format(.milliseconds(cpu), .measured) + ", peak " + ByteSize.text(rss)
                }
                Console.line("    " + node.node.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text)
            }
        }
    }
}

extension HistoryCommand {
    /// `--node NAME`: a table of the node's recent runs, newest first (runs
    /// that did not include it are left out). A fan-out's name shows each
    /// of its instances, named in a last column.
    func showNode(_ name: String, of runs: [RunRecord], idWidth: Int, path: String) {
        let exact = runs.contains { run in run.nodes.contains { $0.node == name } }
        let matches: (String) -> Bool = exact ? { $0 == name } : { $0.hasPrefix(name + "[") && $0.hasSuffix("]") }
        let rows: [[String]] = runs.flatMap { run in run.nodes.filter { matches($0.node) }.map { record in
            let duration = record.durationMilliseconds.map { DurationText.format(.milliseconds($0), .measured) } ?? "-"
            let cpu = record.cpuMilliseconds.map { DurationText.format(.milliseconds($0), .measured) } ?? "-"
            let rss = record.maxRSSBytes.map(ByteSize.text) ?? "-"
            var result = record.result.rawValue
            if record.attempts > 1 { result += " (\(record.attempts) attempts)" }
            return ["#" + String(run.id), DateText.human(run.startedAt), duration, cpu, rss, result] + (exact ? [] : [record.node])
        } }
        guard !rows.isEmpty else {
            Console.line("node \(name) is in none of the last \(runs.count) runs of \(path)")
            return
        }
        let header = ["RUN", "STARTED", "DURATION", "CPU", "PEAK RSS", "RESULT"] + (exact ? [] : ["NODE"])
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
        // Numbers right-aligned; the run, the time and the result left-aligned.
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                if column == cells.count - 1 { return cell }
                return (2...4).contains(column) ? cell.leftPadded(to: widths[column])
                    : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        Console.line(line(header))
        for row in rows { Console.line(line(row)) }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
