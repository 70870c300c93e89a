import ArgumentParser
import Foundation
import MoonCache
import MoonGraph
import MoonJSON
import MoonSession
import MoonState

/// `moon why [FILE] NODE [NAME=VALUE...] [-- ARGS...]`: why the node will
/// run, or why it ran last time — the parts of its fingerprint that differ
/// from its last success, named — and what the output cache holds for it.
/// Reads `.moon/state.db` and the local cache; runs and writes nothing.
struct WhyCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "why",
        abstract: "Say why a node will run, or why it ran last time.",
        discussion: """
        Names the parts of the node's fingerprint that differ from its last success: \
        each source file that changed (old and new size and hash), each environment \
        variable (its value only when its name does not look secret), each var read \
        (--set), what a need left it, and the command (a diff). A node that is up to \
        date says since when, and what made it run last time. When the output cache has \
        no entry for the node, the nearest entry of the same node is named with what \
        differs. Reads .moon/state.db and the local cache; runs and changes nothing. \
        Exit status 0, or 2 for an unknown node.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the node, followed by its NAME=VALUE parameters. After --, words for "
                                 + "its ${{ args }}.", valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @Flag(name: .long, help: "Print one JSON object (its shape is in docs/incremental.md).")
    var json = false

    @OptionGroup var options: PlanOptions

    /// How many entries of the cache `why` reads when looking for a node's nearest.
    static let cacheEntryLimit = 5000

    func run(passthrough: [String]) throws {
        let (_, words) = try GraphFileLocator.split(arguments)
        let names = words.filter { !$0.contains("=") }
        guard names.count == 1, let name = names.first else {
            throw CLIError(names.isEmpty ? "moon why needs the name of a node" : "moon why explains one node at a time, got \(names.count)",
                           help: "usage: moon why [FILE] NODE [NAME=VALUE...] [--json]")
        }
        let plan = try options.plan(arguments, passthrough: passthrough)
        let graph = plan.graph
        guard let targets = graph.targets(named: name), let index = targets.first else {
            throw CLIError("unknown node '\(name)'")
        }
        guard targets.count == 1 else {
            let shown = targets.prefix(3).map { "'\(graph.nodes[$0].name)'" }.joined(separator: ", ")
            throw CLIError("'\(name)' names \(targets.count) instances; moon why explains one",
                           help: "name one of them, e.g. \(shown)")
        }
        let node = graph.nodes[index]
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let state = IncrementalState(graph: graph, store: opened.store, onWarning: warn)
        let neverRan = opened.store == nil && opened.warning == nil
        let forecast = RunForecast(plan: plan, state: state, storeMissing: neverRan)
        let key = state.graphKey
        var recorded: (last: FingerprintParts?, previous: FingerprintParts?)?
        var attempt: WhyReport.Attempt?
        if let store = opened.store {
            do {
                recorded = try store.whyParts(graph: key, node: node.name)
                // The newest run that started it (the history keeps the last runs).
                for run in try store.recentRuns(graph: key, limit: 20) {
                    guard let record = run.nodes.first(where: { $0.node == node.name }), record.startedAt != nil else { continue }
                    attempt = WhyReport.Attempt(run: run.id, at: record.startedAt ?? run.startedAt, result: record.result.rawValue)
                    break
                }
            } catch {
                warn("cannot read \(store.path) (\(store.failureReason(error)))")
            }
        }
        let current = state.currentParts(node: index)
        let staleness = forecast.staleness[index] ?? (neverRan && !node.sources.isEmpty ? [.neverRun] : [])
        var report = WhyReport.make(node: node.name, hasSources: !node.sources.isEmpty, verdict: forecast.verdicts[index],
                                    staleness: staleness.map { neverRan && $0 == .noStore ? .neverRun : $0 },
                                    stored: state.stored(node.name), recorded: recorded, current: current, lastAttempt: attempt)
        if case .runs? = forecast.verdicts[index], !node.sources.isEmpty, !state.force, CacheChecker.isCached(node), let current {
            report.cache = cacheFinding(index, node: node, state: state, current: current)
        }
        if json {
            Console.line(report.json.pretty())
        } else {
            for line in report.lines { Console.line(line) }
        }
    }

    /// What the local cache holds for graph node `index`: an entry under the
    /// key it would run with, or the entry of the same node (among those
    /// that record their parts) with the fewest differing parts.
    private func cacheFinding(_ index: Int, node: Node, state: IncrementalState, current: FingerprintParts) -> WhyReport.Cache? {
        guard let fingerprint = state.cacheFingerprint(node: index) else { return nil }
        let directory = CacheDirectory(path: CacheSettings.resolve(option: nil, graph: state.graph))
        let key = CacheKey(fingerprint: fingerprint)
        if directory.hasEntry(key) { return WhyReport.Cache(key: key.hex, hit: true, entries: 1, nearest: nil) }
        var entries = 0
        var nearest: (key: String, changes: [WhyChange])?
        for other in directory.entryKeys(limit: Self.cacheEntryLimit) {
            guard let entry = directory.entry(other, notingUse: false), entry.node == node.name,
                  let text = entry.why, let parts = FingerprintParts(json: text) else { continue }
            entries += 1
            let changes = current.changes(since: parts)
            if nearest == nil || changes.count < nearest!.changes.count { nearest = (other.hex, changes) }
        }
        return WhyReport.Cache(key: key.hex, hit: false, entries: entries, nearest: nearest)
    }
}
