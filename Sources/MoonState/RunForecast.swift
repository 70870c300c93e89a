import MoonGraph

/// What a run of a plan would do to each of its nodes, from the store,
/// without running anything: the one place that decides "runs", "may run"
/// and "up to date" for `moon status` and `moon run -n`.
///
/// A node whose own inputs are unchanged may still run when one of its
/// needs runs (or may run): the need can rewrite files that are this
/// node's sources, or change the outputs and values this node reads. That
/// is only known once the need has run (content hashes cut a chain short
/// when a need writes the same bytes), so such a node "may run", and so,
/// down the chain, may the nodes after it.
public struct RunForecast: Sendable {
    public enum Verdict: Sendable, Equatable {
        /// The node runs; `reason` says why (`no sources`, `src/a.c changed`, …).
        case runs(reason: String)
        /// The node runs if a need changes what it reads; `reason` says which.
        case mayRun(reason: String)
        case upToDate

        /// One word or two, for a column: `will run`, `may run`, `up to date`.
        public var label: String {
            switch self {
            case .runs: return "will run"
            case .mayRun: return "may run"
            case .upToDate: return "up to date"
            }
        }

        /// The verdict with its reason, as `moon status` prints it.
        public var text: String {
            switch self {
            case .runs(let reason): return reason == Self.noSources ? "runs (no sources)" : "runs: \(reason)"
            case .mayRun(let reason): return "may run: \(reason)"
            case .upToDate: return "up to date"
            }
        }

        static let noSources = "no sources"
    }

    /// Per graph node index (selected nodes only).
    public private(set) var verdicts: [Int: Verdict] = [:]

    /// How many selected nodes would run, may run, and are up to date.
    public var counts: (runs: Int, mayRun: Int, upToDate: Int) {
        var counts = (0, 0, 0)
        for verdict in verdicts.values {
            switch verdict {
            case .runs: counts.0 += 1
            case .mayRun: counts.1 += 1
            case .upToDate: counts.2 += 1
            }
        }
        return counts
    }

    /// `storeMissing`: there is no store yet (nothing ran here), so a node
    /// with sources is "never run", not "no state store".
    public init(plan: Plan, state: IncrementalState, storeMissing: Bool = false) {
        let graph = plan.graph
        for index in plan.startOrder {
            let node = graph.nodes[index]
            // A for-each over a need's output: its instances are made, and
            // each is checked, once the need has completed.
            if let fanOut = node.fanOut, !node.sources.isEmpty {
                verdicts[index] = .mayRun(reason: "expands when '\(graph.nodes[fanOut.need].name)' completes; each instance is checked then")
                continue
            }
            // What its needs left last time: the run compares with those.
            let needs = node.needs.map { need -> NeedState in
                let name = graph.nodes[need].name
                let stored = state.stored(name)
                return NeedState(name: name, outputs: stored?.outputs ?? [], values: stored?.values ?? [])
            }
            switch state.check(node: index, needs: needs) {
            case .untracked:
                verdicts[index] = .runs(reason: Verdict.noSources)
            case .stale(let reasons):
                let texts = reasons.map { storeMissing && $0 == .noStore ? Staleness.neverRun.description : $0.description }
                verdicts[index] = .runs(reason: texts.joined(separator: "; "))
            case .upToDate:
                verdicts[index] = mayRun(index, graph: graph, sources: state.checkedSources(node: index)) ?? .upToDate
            }
        }
    }

    /// `.mayRun` when a need of up-to-date node `index` runs or may run.
    private func mayRun(_ index: Int, graph: Graph, sources: [String]) -> Verdict? {
        var writers: [String] = []
        var others: [String] = []
        for need in graph.nodes[index].needs {
            let verb: String
            switch verdicts[need] {
            case .runs?: verb = "runs"
            case .mayRun?: verb = "may run"
            default: continue
            }
            let name = "'\(graph.nodes[need].name)' \(verb)"
            let globs = graph.nodes[need].generates.map { Glob($0) }
            let written = sources.filter { path in globs.contains { SourceScanner.glob($0, matches: path) } }
            if written.isEmpty {
                others.append(name)
            } else {
                let shown = written.prefix(3).joined(separator: ", ") + (written.count > 3 ? " and \(written.count - 3) more" : "")
                writers.append("\(name) and writes its sources (\(shown))")
            }
        }
        guard !writers.isEmpty || !others.isEmpty else { return nil }
        var parts = writers
        if !others.isEmpty {
            parts.append(others.joined(separator: ", ") + " (\(others.count == 1 ? "its" : "their") outputs are inputs of this node)")
        }
        return .mayRun(reason: parts.joined(separator: "; "))
    }
}
