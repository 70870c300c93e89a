import ArgumentParser
import Foundation
import MoonCache
import MoonGraph
import MoonReport
import MoonSession
import MoonState

/// `moon status [FILE] [NODE [NAME=VALUE...]...] [-- ARGS...]`: which nodes
/// a run with the same words would skip as up to date, and why the others
/// would run (a node's parameters and args are part of its fingerprint).
struct StatusCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say which nodes are up to date, and why the others are not.",
        discussion: """
        A node with 'sources' is up to date when its sources, command, environment \
        and the outputs of its needs are those of its last successful run, and every \
        'generates' pattern matches a file. Nodes without 'sources' always run. \
        A node that would run but whose outputs the local output cache holds is \
        'restored from the cache instead'; a node with sources and no 'generates' \
        (a lint) that passed before with the same inputs is skipped the same way. \
        A node whose need runs (or may run) 'may run': the need can rewrite its \
        sources or change the outputs it reads. \
        Reads .moon/state.db beside the graph file; changes nothing.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to look at (default: all), each followed by its NAME=VALUE "
                                 + "parameters. After --, words for the last node's ${{ args }}.", valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @OptionGroup var options: PlanOptions

    func run(passthrough: [String]) throws {
        let plan = try options.plan(arguments, passthrough: passthrough)
        let graph = plan.graph
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let state = IncrementalState(graph: graph, store: opened.store, onWarning: warn)
        // No store yet (nothing ran here): every node is "never run".
        let neverRan = opened.store == nil && opened.warning == nil

        let forecast = RunForecast(plan: plan, state: state, storeMissing: neverRan)
        let restorable = CacheForecast.restorable(plan: plan, state: state, forecast: forecast,
                                                  cache: CacheDirectory(path: CacheSettings.resolve(option: nil, graph: graph)))
        // (A barrier is not a node of the file: its dependents' lines say what it waits for.)
        let rows = plan.selected.sorted().filter { !graph.nodes[$0].isBarrier }.map { index -> (name: String, verdict: String) in
            let verdict = forecast.verdicts[index]
            return (graph.nodes[index].name, restorable.contains(index) ? CacheForecast.text(verdict, node: graph.nodes[index]) : verdict?.text ?? "up to date")
        }
        for line in Self.layout(rows) { Console.line(line) }
    }

    /// The widest name a row keeps beside its verdict.
    static let nameColumnLimit = 60

    /// One line per row, the verdicts in one column: as wide as the longest
    /// name (in terminal columns), as `moon history --nodes` lays out. A
    /// name wider than `nameColumnLimit` has a line of its own, its verdict
    /// under it in the column, so one long name does not push every verdict right.
    static func layout(_ rows: [(name: String, verdict: String)]) -> [String] {
        let widths = rows.map { TextWidth.columns($0.name) }
        let width = widths.filter { $0 <= nameColumnLimit }.max() ?? 0
        var lines: [String] = []
        lines.reserveCapacity(rows.count)
        for (row, columns) in zip(rows, widths) {
            if columns > width {
                lines.append(row.name)
                lines.append(String(repeating: " ", count: width + 2) + row.verdict)
            } else {
                lines.append(row.name + String(repeating: " ", count: width - columns + 2) + row.verdict)
            }
        }
        return lines
    }
}
