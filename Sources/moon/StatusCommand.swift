import ArgumentParser
import Foundation
import MoonCache
import MoonGraph
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
        'restored from the cache instead'. \
        A node whose need runs (or may run) 'may run': the need can rewrite its \
        sources or change the outputs it reads. \
        Reads .moon/state.db beside the graph file; changes nothing.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to look at (default: all), each followed by its NAME=VALUE "
                                 + "parameters. After --, words for the last node's ${{ args }}.", valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @OptionGroup var vars: VarOverrides

    @OptionGroup var selection: SelectionOptions

    func run() throws { try run(passthrough: []) }

    func run(passthrough: [String]) throws {
        let (_, plan) = try GraphFileLocator.load(arguments, passthrough: passthrough, overrides: try vars.values(),
                                                     selection: selection, requireAll: false)
        let graph = plan.graph
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let state = IncrementalState(graph: graph, store: opened.store, onWarning: warn)
        // No store yet (nothing ran here): every node is "never run".
        let neverRan = opened.store == nil && opened.warning == nil

        let forecast = RunForecast(plan: plan, state: state, storeMissing: neverRan)
        let restorable = CacheForecast.restorable(plan: plan, state: state, forecast: forecast,
                                                  cache: CacheDirectory(path: CacheOptions.resolve(option: nil, graph: graph)))
        // (A barrier is not a node of the file: its dependents' lines say what it waits for.)
        let shown = plan.selected.filter { !graph.nodes[$0].isBarrier }
        let width = min(32, shown.map { graph.nodes[$0].name.count }.max() ?? 0)
        for index in shown {
            let name = graph.nodes[index].name
            let verdict = forecast.verdicts[index]
            let text = restorable.contains(index) ? CacheForecast.text(verdict) : verdict?.text ?? "up to date"
            Console.line(name.padding(toLength: max(width, name.count), withPad: " ", startingAt: 0) + "  " + text)
        }
    }
}
