import Foundation
import MoonGraph
import MoonJSON

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
    /// Why each selected node that runs is not up to date, as `check` said (for `moon why`).
    public private(set) var staleness: [Int: [Staleness]] = [:]

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

    /// Barriers (`Node.isBarrier`) are forecast as any group, but kept
    /// apart: they are not nodes a user sees or counts.
    private var barriers: [Int: Verdict] = [:]
    /// Per node that runs or may run: the files its `generates` name, and
    /// its patterns with wildcards (matched one by one), made once for all
    /// the nodes after it.
    private var written: [Int: Writes] = [:]

    /// What a node that runs may write: literal paths (a file, or a
    /// directory and all below it) by path, and the other patterns.
    private struct Writes {
        var paths: [String: Int] = [:]
        var patterns: [(glob: Glob, node: Int)] = []
        /// Of a group, its needs that run or may run, in order; the node itself otherwise.
        var nodes: [Int] = []

        mutating func add(_ node: Int, generates: [String]) {
            nodes.append(node)
            for pattern in generates {
                let glob = Glob(pattern)
                if glob.isLiteral, !glob.base.isEmpty {
                    if paths[glob.base] == nil { paths[glob.base] = node }
                } else {
                    patterns.append((glob, node))
                }
            }
        }

        /// The node that writes `path`, if any: the path itself or a directory above it, then the patterns.
        func writer(of path: String) -> Int? {
            if !paths.isEmpty {
                if let node = paths[path] { return node }
                var prefix = Substring(path)
                while let slash = prefix.lastIndex(of: "/") {
                    prefix = prefix[..<slash]
                    if let node = paths[String(prefix)] { return node }
                }
            }
            return patterns.first { SourceScanner.glob($0.glob, matches: path) }?.node
        }
    }

    /// `storeMissing`: there is no store yet (nothing ran here), so a node
    /// with sources is "never run", not "no state store".
    public init(plan: Plan, state: IncrementalState, storeMissing: Bool = false) {
        let graph = plan.graph
        // A barrier's need state, made once from what the store holds of its instances.
        var barrierNeeds: [Int: NeedState] = [:]
        func needState(_ need: Int) -> NeedState {
            let node = graph.nodes[need]
            if node.isBarrier {
                if let made = barrierNeeds[need] { return made }
                let digest = BarrierDigest.of(node.needs.map { instance in
                    let name = graph.nodes[instance].name
                    let stored = state.stored(name)
                    return (name: name, outputs: stored?.outputs ?? [], values: stored?.values ?? [])
                })
                let made = NeedState(name: node.name, values: [digest])
                barrierNeeds[need] = made
                return made
            }
            let stored = state.stored(node.name)
            return NeedState(name: node.name, outputs: stored?.outputs ?? [], values: stored?.values ?? [])
        }
        // The checks' files are stat'ed ahead on a second thread, as in a run.
        state.expectChecks(of: plan.startOrder)
        for index in plan.startOrder {
            let node = graph.nodes[index]
            // A for-each over a need's output: its instances are made, and
            // each is checked, once the need has completed.
            if let fanOut = node.fanOut, !node.sources.isEmpty {
                let verdict = expansion(index, fanOut, graph: graph, state: state, needs: node.needs.map(needState))
                set(index, verdict ?? .mayRun(reason: "expands when '\(graph.nodes[fanOut.need].name)' completes; each instance is checked then"),
                    graph: graph)
                continue
            }
            // A group runs nothing: it is as up to date as its needs.
            if case .group = node.action {
                set(index, mayRun(index, graph: graph, sources: []) ?? .upToDate, graph: graph)
                continue
            }
            // What its needs left last time: the run compares with those (a
            // built-in reads a barrier's instances, as the run does).
            var needs = node.needs
            if case .builtin = node.action, needs.contains(where: { graph.nodes[$0].isBarrier }) {
                needs = needs.flatMap { graph.nodes[$0].isBarrier ? graph.nodes[$0].needs : [$0] }
            }
            switch state.check(node: index, needs: needs.map(needState)) {
            case .untracked:
                set(index, .runs(reason: Verdict.noSources), graph: graph)
            case .stale(let reasons):
                staleness[index] = reasons
                let texts = reasons.map { storeMissing && $0 == .noStore ? Staleness.neverRun.description : $0.description }
                set(index, .runs(reason: texts.joined(separator: "; ")), graph: graph)
            case .upToDate:
                set(index, mayRun(index, graph: graph, sources: state.checkedSources(node: index)) ?? .upToDate, graph: graph)
            }
        }
    }

    /// A `for-each` over the output of a need that is up to date: its items
    /// are those the store holds of the need, so its instances are made and
    /// checked as the run would (nil when the need may change them, or the
    /// stored value is not a list of strings).
    private func expansion(_ index: Int, _ fanOut: DynamicFanOut, graph: Graph, state: IncrementalState,
                           needs: [NeedState]) -> Verdict? {
        guard verdicts[fanOut.need] == .upToDate, mayRun(index, graph: graph, sources: []) == nil,
              let text = state.stored(graph.nodes[fanOut.need].name)?.outputs.first(where: { $0.0 == fanOut.key })?.1,
              let items = (try? JSONParser.parse(text))?.stringArray else { return nil }
        let instances = graph.instances(ofDynamic: index, items: items)
        let first = state.add(instances: instances)
        var stale: [(name: String, reasons: [Staleness])] = []
        for i in instances.indices {
            if case .stale(let reasons) = state.check(node: first + i, needs: needs) { stale.append((instances[i].name, reasons)) }
        }
        guard let shown = stale.first else { return .upToDate }
        let of = stale.count == 1 ? "" : " (\(stale.count) of its \(instances.count) instances)"
        return .runs(reason: "'\(shown.name)' runs: " + shown.reasons.map(\.description).joined(separator: "; ") + of)
    }

    /// Records the verdict; for a node that runs or may run, what it writes.
    private mutating func set(_ index: Int, _ found: Verdict, graph: Graph) {
        let node = graph.nodes[index]
        if node.isBarrier { barriers[index] = found } else { verdicts[index] = found }
        guard found != .upToDate else { return }
        var writes = Writes()
        if case .group = node.action {
            // A group writes what its needs that run write (a barrier, its instances').
            for need in node.needs where verdict(of: need, graph: graph) != nil {
                guard let theirs = written[need] else { continue }
                for (path, node) in theirs.paths where writes.paths[path] == nil { writes.paths[path] = node }
                writes.patterns += theirs.patterns
                writes.nodes.append(need)
            }
        } else {
            writes.add(index, generates: node.generates)
        }
        written[index] = writes
    }

    private func verdict(of node: Int, graph: Graph) -> Verdict? {
        let verdict = graph.nodes[node].isBarrier ? barriers[node] : verdicts[node]
        return verdict == .upToDate ? nil : verdict
    }

    /// `.mayRun` when a need of up-to-date node `index` runs or may run:
    /// one reason, the first need that writes its sources, else the first
    /// that runs, and how many run or may run. Linear: each source path is
    /// looked up in what the needs write, made once per need.
    private func mayRun(_ index: Int, graph: Graph, sources: [String]) -> Verdict? {
        var running: [Int] = []
        for need in graph.nodes[index].needs where verdict(of: need, graph: graph) != nil && written[need] != nil {
            running.append(need)
        }
        guard let first = running.first else { return nil }
        // A few needs are looked up one by one; many (a fan-in) in one
        // index of all they write, made in the time of reading them.
        var lookups = running.map { written[$0]! }
        if lookups.count > 4 {
            var merged = Writes()
            for writes in lookups {
                for (path, node) in writes.paths where merged.paths[path] == nil { merged.paths[path] = node }
                merged.patterns += writes.patterns
            }
            lookups = [merged]
        }
        var writer: Int?
        var paths: [String] = []
        for path in sources {
            guard let node = lookups.lazy.compactMap({ $0.writer(of: path) }).first, writer == nil || writer == node else { continue }
            writer = node
            paths.append(path)
            if paths.count > 3 { break }
        }
        let (described, many) = describe(writer ?? first, graph: graph)
        var text = described
        if !paths.isEmpty {
            text += " and writes its sources (\(paths.prefix(3).joined(separator: ", "))\(paths.count > 3 ? " and more" : ""))"
        } else {
            text += " (\(running.count == 1 && !many ? "its" : "their") outputs are inputs of this node)"
        }
        if running.count > 1 {
            text = "\(running.count) of its \(graph.nodes[index].needs.count) needs run or may run, e.g. " + text
        }
        return .mayRun(reason: text)
    }

    /// "'text[a]' runs"; for a barrier, how many of its instances run or
    /// may run and the first of them.
    private func describe(_ need: Int, graph: Graph) -> (text: String, many: Bool) {
        let node = graph.nodes[need]
        let verb = verdict(of: need, graph: graph).map { if case .runs = $0 { return "runs" } else { return "may run" } } ?? "may run"
        guard node.isBarrier, let writes = written[need], let first = writes.nodes.first else {
            return ("'\(node.name)' \(verb)", false)
        }
        let text = describe(first, graph: graph).text
        guard writes.nodes.count > 1 else { return (text, false) }
        return ("\(writes.nodes.count) of the \(node.needs.count) instances of '\(node.name)' run or may run, e.g. \(text)", true)
    }
}
