import ArgumentParser
import Foundation
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonState

/// One `moon run`, as plain values: what swift-argument-parser read into
/// `RunCommand`, or what `EarlyGraph`'s quick reading of a usual command
/// line found (the parser's reflection was ~1.1 ms of every start, on the
/// way to the first node). Both give the same value for the same command
/// line (`MOON_DEBUG_EARLY=1` compares them; EarlyLoadTests).
struct RunInvocation: Equatable {
    var arguments: [String] = []
    var jobs: Int?
    var keepGoing = false
    var dryRun = false
    var output: RunCommand.OutputMode = .auto
    var json = false
    var color: RunCommand.ColorMode = .auto
    var timeout: String?
    var grace = "5s"
    var assignments: [String] = []
    var force = false
    var outputMode: NodeOutputMode = .prefixed
    var stallAfter = "30s"
    var quiet = false
    var verbose = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        _ = try parsedDuration(grace, option: "--grace")
        _ = try parsedDuration(stallAfter, option: "--stall-after")
        if let timeout, try parsedDuration(timeout, option: "--timeout") <= .zero {
            // As a node's `timeout: 0s`: a run that may not start is a mistake.
            throw ValidationError("--timeout must be longer than 0s; leave it out for no time limit")
        }
        _ = try overrides()
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
        // With --json, stdout carries only events (DESIGN.md §5); a dry run
        // has none, and its text plan there would break every reader of the
        // stream. The plan as JSON is `moon graph`'s.
        if dryRun && (json || output == .json) {
            throw ValidationError("--dry-run prints the plan as text and starts nothing, so it has no events for --json; "
                + "for the plan as JSON, use 'moon graph --format json' with the same file, nodes and --set values")
        }
    }

    func parsedDuration(_ text: String, option: String) throws -> Duration {
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option): '\(text)' is not a duration (use 250ms, 2s, 1m30s, 1h or a number of seconds)")
        }
    }

    func overrides() throws -> [String: String] {
        try VarOverrides.parse(assignments)
    }

    func run() throws {
        let (path, targets) = try GraphFileLocator.split(arguments)
        let overrides = try overrides()
        // The state store beside the file (up-to-date checks and history)
        // opens on another thread while the file loads. When moon could tell
        // the file from its arguments (`EarlyGraph`), both began before the
        // command line was parsed and the file is loaded already. A dry run
        // only reads the store (recorded durations order the plan). Only an
        // existing store is opened early.
        let file: GraphFile
        let early: EarlyStore
        // Diagnostics on stderr follow --color too.
        let diagnosticsColor = Terminal.stderrColor(colorChoice)
        if let started = EarlyGraph.matching(EarlyGraph.Guess(path: path, overrides: overrides, dryRun: dryRun)) {
            early = started.store
            file = try GraphFile.finish(started.result, color: diagnosticsColor)
        } else {
            early = EarlyStore(graphPath: path, create: !dryRun)
            file = try GraphFile.finish(GraphFile.parse(path, overrides: overrides), color: diagnosticsColor)
        }
        let (opened, durations) = early.result() ?? Self.openStore(file.graph, create: !dryRun)
        if let warning = opened.warning { warn(warning) }
        let store = opened.store
        let weights = durations.flatMap { PriorityWeights.weights(for: file.graph, durations: $0) }
        let plan = try GraphFileLocator.plan(for: file, targets: targets, weights: weights, color: diagnosticsColor)
        if dryRun {
            printDryRun(plan, store: store, storeMissing: store == nil && opened.warning == nil)
            return
        }
        var options = RunOptions(jobs: jobs, keepGoing: keepGoing, grace: try parsedDuration(grace, option: "--grace"))
        if let timeout { options.timeout = try parsedDuration(timeout, option: "--timeout") }
        let state = IncrementalState(graph: file.graph, store: store, force: force, onWarning: warn)
        let session = RunSession(graph: file.graph, plan: plan, options: options, reporterKind: reporterKind(), verbosity: verbosity,
                                 state: state, store: store)
        session.outputMode = outputMode
        session.stallAfter = try parsedDuration(stallAfter, option: "--stall-after")
        session.color = ColorPolicy.resolve(colorChoice, environment: Terminal.colorEnvironment, fd: 1).enabled
        // Loading left freed memory behind (the YAML tree of a large file);
        // hand it back before the run, so the run's own memory comes on top
        // of what is live, not of the loading's peak.
        LinuxCalls.trimHeap()
        throw MoonExit(code: session.run())
    }


    /// The plan, and for a graph with `sources` what a run would do to each
    /// node (the forecast `moon status` prints); only "nothing to do" when
    /// every node is up to date, as `ninja -n` and `make -n` say.
    private func printDryRun(_ plan: Plan, store: StateStore?, storeMissing: Bool) {
        let graph = plan.graph
        guard graph.nodes.contains(where: { !$0.sources.isEmpty }) else {
            Console.write(GraphRenderer.dryRun(plan))
            return
        }
        let state = IncrementalState(graph: graph, store: store, force: force, onWarning: warn)
        let forecast = RunForecast(plan: plan, state: state, storeMissing: storeMissing)
        let counts = forecast.counts
        if counts.runs == 0 && counts.mayRun == 0 {
            let all = counts.upToDate == 1 ? "its node is" : "all \(counts.upToDate) nodes are"
            Console.line("dry run: graph \(graph.name), nothing to do: \(all) up to date")
            return
        }
        Console.write(GraphRenderer.dryRun(plan, states: forecast.verdicts.mapValues(\.label)))
    }

    /// Opens the store of the graph at `graphPath` and reads its recorded
    /// durations (which give the critical-path weights).
    static func openStore(graphPath: String, create: Bool) -> (StateStore.Opened, [String: Int]?) {
        let opened = StateStore.open(graphDirectory: Graph.directory(of: graphPath), create: create)
        let key = StateStore.graphKey(forGraphAt: graphPath)
        return (opened, opened.store.flatMap { try? $0.lastDurations(graph: key) })
    }

    static func openStore(_ graph: Graph, create: Bool) -> (StateStore.Opened, [String: Int]?) {
        openStore(graphPath: graph.path, create: create)
    }

    var colorChoice: ColorPolicy.Choice { ColorPolicy.Choice(rawValue: color.rawValue) ?? .auto }

    var verbosity: PlainReporter.Verbosity {
        quiet ? .quiet : verbose ? .verbose : .normal
    }

    func reporterKind() -> RunSession.ReporterKind {
        if json { return .json }
        switch output {
        case .json: return .json
        case .tty: return .tty
        case .auto: return isatty(1) == 1 ? .tty : .plain
        case .plain: return .plain
        }
    }
}
