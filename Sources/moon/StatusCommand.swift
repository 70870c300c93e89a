import ArgumentParser
import Foundation
import MoonGraph
import MoonState

/// `moon status [FILE] [NODE...]`: which nodes a run would skip as up to
/// date, and why the others would run.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say which nodes are up to date, and why the others are not.",
        discussion: """
        A node with 'sources' is up to date when its sources, command, environment \
        and the outputs of its needs are those of its last successful run, and every \
        'generates' pattern matches a file. Nodes without 'sources' always run. \
        Reads .moon/state.db beside the graph file; changes nothing.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to look at (default: all).", valueName: "file-or-node"))
    var arguments: [String] = []

    @OptionGroup var vars: VarOverrides

    func run() throws {
        let (path, targets) = try GraphFileLocator.split(arguments)
        let overrides = try vars.values()
        let file = try GraphFile.load(path, overrides: overrides)
        let graph = file.graph
        let plan = try GraphFileLocator.plan(for: file, targets: targets, color: Terminal.stderrColor)
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let state = IncrementalState(graph: graph, store: opened.store, onWarning: warn)
        // No store yet (nothing ran here): every node is "never run".
        let neverRan = opened.store == nil && opened.warning == nil

        let width = min(32, plan.selected.map { graph.nodes[$0].name.count }.max() ?? 0)
        // Nodes that will run: a dependent is only up to date if they leave the same outputs.
        var willRun = Set<Int>()
        var rows: [(Int, String)] = []
        for index in plan.startOrder {
            let node = graph.nodes[index]
            let needs = node.needs.map { need -> NeedState in
                let name = graph.nodes[need].name
                let stored = state.stored(name)
                return NeedState(name: name, outputs: stored?.outputs ?? [], values: stored?.values ?? [])
            }
            let upstream = node.needs.filter { willRun.contains($0) }.map { "'\(graph.nodes[$0].name)'" }
            let text: String
            switch state.check(node: index, needs: needs) {
            case .untracked:
                willRun.insert(index)
                text = "runs (no sources)"
            case .upToDate:
                text = upstream.isEmpty ? "up to date"
                    : "up to date, unless \(upstream.joined(separator: ", ")) \(upstream.count == 1 ? "changes its" : "change their") outputs"
            case .stale(let reasons):
                willRun.insert(index)
                text = "runs: " + reasons.map { neverRan && $0 == .noStore ? Staleness.neverRun.description : $0.description }
                    .joined(separator: "; ")
            }
            rows.append((index, text))
        }
        for (index, text) in rows.sorted(by: { $0.0 < $1.0 }) {
            let name = graph.nodes[index].name
            Console.line(name.padding(toLength: max(width, name.count), withPad: " ", startingAt: 0) + "  " + text)
        }
    }
}
