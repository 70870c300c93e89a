import ArgumentParser
import Foundation
import MoonGraph
import MoonReport
import MoonRun
import MoonSession
import MoonState
import MoonSystem

/// What `moon run` was asked to do: every option of `RunCommand`, as a plain
/// value. `RunCommand`'s options make it, and so does `FastLine` for the
/// common command lines without swift-argument-parser; the run, and every
/// rule an option must meet, read this one value.
/// One thread, in order: the command line, the graph file, the state store,
/// the run.
struct RunRequest: Equatable {
    /// `[FILE] [NODE [NAME=VALUE...]...]`.
    var arguments: [String] = []
    /// The words after `--` that follow a NODE (`Moon.parse`), for the last node's `${{ args }}`.
    var passthrough: [String] = []
    var jobs: Int?
    var keepGoing = false
    var dryRun = false
    var report = ReportSettings()
    var timeout: String?
    var grace = "5s"
    /// `--set KEY=VALUE`, in order.
    var assignments: [String] = []
    var cache = CacheSettings()
    var resume = false
    var exclude: [String] = []
    var watch = WatchSettings()
    var force = false
    var forceOnly = false
    var stallAfter = "30s"
    /// `--memory SIZE` (else `MOON_MEMORY`): the run's memory budget.
    var memory: String?
    /// `--yes`: every `confirm:` question answered yes.
    var yes = false
    /// `--trace PATH`: the run's Chrome trace, written as it goes.
    var trace: String?

    /// Every rule the options must meet, `RunCommand`'s option groups' with
    /// its own (the fast path runs them all at once; argument-parser each in its place).
    func checked() throws -> RunRequest {
        try report.validate()
        _ = try watch.values()
        try validate()
        return self
    }

    /// `run`'s own rules (`ReportSettings` and `WatchSettings` check theirs).
    func validate() throws {
        _ = try options()
        _ = try duration(stallAfter, option: "--stall-after")
        _ = try VarOverrides.parse(assignments)
        // With --json, stdout carries only events (DESIGN.md §5); a dry run
        // has none, and its text plan there would break every reader of the
        // stream. The plan as JSON is `moon graph`'s.
        if dryRun && report.isJSON {
            throw ValidationError("--dry-run prints the plan as text and starts nothing, so it has no events for --json; "
                + "for the plan as JSON, use 'moon graph --format json' with the same file, nodes and --set values")
        }
        if dryRun && watch.watch { throw ValidationError("--dry-run starts nothing, so it has nothing to --watch") }
        if trace != nil && dryRun { throw ValidationError("--dry-run starts nothing, so it has nothing to --trace") }
        if trace != nil && watch.watch {
            throw ValidationError("--trace writes the trace of one run; in watch mode, run 'moon trace' after the run you want to see")
        }
        if trace?.isEmpty == true { throw ValidationError("--trace needs a file path") }
        if forceOnly && watch.watch {
            throw ValidationError("--force-only forces one run's named nodes; in watch mode, use -B to force the first run, or leave it out")
        }
    }

    /// How the run behaves as a whole: `-j`, `-k`, `--grace`, `--timeout`.
    func options() throws -> RunOptions {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        var options = RunOptions(jobs: jobs, keepGoing: keepGoing, grace: try duration(grace, option: "--grace"))
        options.resources.memory = try memoryBudget()
        options.resources.available = availableMemory()
        options.resources.oomKills = { SystemMemory.oomKills() }
        options.resources.warn = { warn($0) }
        options.assumeYes = yes
        if let timeout {
            options.timeout = try duration(timeout, option: "--timeout")
            // As a node's `timeout: 0s`: a run that may not start is a mistake.
            if options.timeout! <= .zero {
                throw ValidationError("--timeout must be longer than 0s; leave it out for no time limit")
            }
        }
        return options
    }

    /// `--memory`, else `MOON_MEMORY`, in bytes; nil: the memory available when the run starts.
    /// A bad `--memory` is a usage error; a bad `MOON_MEMORY` is not (`availableMemory`).
    func memoryBudget() throws -> Int64? {
        if let memory { return try Self.size(memory, option: "--memory") }
        guard let text = Terminal.variable("MOON_MEMORY"), !text.isEmpty else { return nil }
        return try? Self.size(text, option: "MOON_MEMORY")
    }

    /// The memory available when the run starts, read only when a node
    /// needs memory. A `MOON_MEMORY` that is not a size is said then, in one
    /// warning: set once in a shell's profile, it must not fail the runs
    /// that need no memory budget.
    func availableMemory() -> @Sendable () -> Int64? {
        var problem: String?
        if memory == nil, let text = Terminal.variable("MOON_MEMORY"), !text.isEmpty {
            do { _ = try Self.size(text, option: "MOON_MEMORY") } catch { problem = "\(error)" }
        }
        return { [problem] in
            let available = SystemMemory.available()
            if let problem {
                warn("\(problem); the budget is the memory available now (\(available.map(ByteSize.text) ?? "unknown"))")
            }
            return available
        }
    }

    /// A memory size with its unit (`900M`, `2G`, `1.5GiB`), as `resources: {memory}` reads it.
    static func size(_ text: String, option: String) throws -> Int64 {
        guard text.contains(where: \.isLetter), let bytes = ByteSize.parse(text), bytes > 0 else {
            let slip = ByteSize.slip(in: text).map { " (\($0))" } ?? ""
            throw ValidationError("\(option): '\(text)' is not a memory size\(slip); write one with its unit, like 900M, 2G or 1.5GiB")
        }
        return bytes
    }

    private func duration(_ text: String, option: String) throws -> Duration {
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option): '\(text)' is not a duration (use 250ms, 2s, 1m30s, 1h or a number of seconds)")
        }
    }

    func run() throws {
        let (path, names) = try GraphFileLocator.split(arguments)
        let file = try GraphFile.load(path, overrides: try VarOverrides.parse(assignments), color: Terminal.stderrColor(report.color))
        try run(file, words: names)
    }

    /// Runs the nodes `words` select in `file`, loaded already (plain `moon` loads it to find its `default:`).
    func run(_ file: GraphFile, words: [String]) throws {
        // Diagnostics on stderr follow --color too.
        let diagnosticsColor = Terminal.stderrColor(report.color)
        let graph = file.graph
        // A dry run only reads the store (recorded durations order the plan);
        // a run makes it, once the file proved valid.
        // A run (not watch mode, which writes as it goes) reads a no-op's snapshot when one stands.
        let opened = StateStore.open(graphDirectory: graph.directory, create: !dryRun,
                                     noopSnapshot: dryRun || watch.watch ? nil : StateStore.graphKey(forGraphAt: graph.path), foldsHistory: false)
        if opened.refused, let refusal = opened.warning { throw CLIError(refusal) }
        if let warning = opened.warning { warn(warning) }
        let store = opened.store
        let weights = PriorityWeights.read(for: graph, from: store)
        let plan = try GraphFileLocator.plan(for: file, words: words, passthrough: passthrough, exclude: exclude, requireAll: true,
                                             weights: weights, color: diagnosticsColor, commands: Moon.commandNames)
        let forced = forceOnly ? try namedNodes(words, plan: plan) : []
        if dryRun {
            printDryRun(plan, store: store, storeMissing: store == nil && opened.warning == nil, forced: forced)
            return
        }
        var options = try options()
        // A connection of its own: the run's store may be busy on another
        // thread (a check, a record) when the loop asks, and a reader of
        // its own never waits for it. It reads the history journal's runs
        // where they are: a run's start writes nothing.
        options.resources.learn = {
            LearnedResources(graph: graph, store: StateStore.open(graphDirectory: graph.directory, create: false, busyTimeout: 0.5,
                                                                  foldsHistory: false).store).memory
        }
        // The run's store, read from a no-op snapshot, answers from it without SQLite.
        options.resources.learnedBound = {
            if let store, store.readFromSnapshot { return LearnedResources.bound(graph: graph, store: store) }
            return LearnedResources.bound(graph: graph, store: StateStore.open(graphDirectory: graph.directory, create: false, busyTimeout: 0.5,
                                                                               foldsHistory: false).store)
        }
        // Read when a Slurm node is about to start: what srun asks for beyond the node's declarations.
        options.slurm.learn = {
            let learned = LearnedResources(graph: graph, store: StateStore.open(graphDirectory: graph.directory, create: false,
                                                                                busyTimeout: 0.5, foldsHistory: false).store)
            return SlurmExport.Learned(memory: learned.memory, time: learned.time)
        }
        // Opt-in (MOON_SLURM_USAGE=1): a step cancelled as its task starts
        // under the reporter can keep the step's output open until the task
        // ends, leaving the job completing (docs/slurm.md).
        options.slurm.reporter = { Terminal.variable("MOON_SLURM_USAGE") == "1" ? SlurmTask.Reporter.ownBinary() : nil }
        if watch.watch {
            let setup = WatchSetup(graphPath: file.source.path, words: words, passthrough: passthrough, exclude: exclude,
                                   commands: Moon.commandNames, overrides: try VarOverrides.parse(assignments), options: options, report: report,
                                   watch: try watch.values(), stallAfter: try duration(stallAfter, option: "--stall-after"),
                                   force: force, diagnosticsColor: diagnosticsColor, store: store,
                                   cache: { [cache] in cache.outputCache(for: $0) }, resume: resume ? lastRun(of: plan.graph) : nil)
            let main = try MainLoop()
            throw ExitCode(try WatchSession(setup: setup, file: file, plan: plan, main: main).run())
        }
        let execution = RunSession(plan: plan, options: options, report: report,
                                 stallAfter: try duration(stallAfter, option: "--stall-after"),
                                 state: IncrementalState(graph: plan.graph, store: store, force: force, forcing: forced, onWarning: warn),
                                 store: store,
                                 cache: cache.outputCache(for: plan.graph),
                                 resume: resume ? lastRun(of: plan.graph) : nil, main: try MainLoop())
        execution.tracePath = trace
        let code = try execution.run()
        if code != 0 { throw ExitCode(code) }
    }

    /// `--force-only`: the graph nodes the command line names (a fan-out:
    /// all its instances); without names, every node the run selects.
    private func namedNodes(_ words: [String], plan: Plan) throws -> Set<Int> {
        let graph = plan.graph
        let named = try NodeSelection.make(names: words, passthrough: passthrough, exclude: exclude, graph: graph)
        guard named.named else { return Set(plan.selected) }
        return Set(named.targets.compactMap(graph.index(of:)))
    }

    /// The record `--resume` resumes from; nil, and a warning, when there is none to be had.
    private func lastRun(of graph: Graph) -> ResumeRecord? {
        switch ResumeRecord.load(graphDirectory: graph.directory, graphKey: StateStore.graphKey(forGraphAt: graph.path)) {
        case .record(let record):
            return record
        case .none:
            warn("--resume: no earlier run of this graph to resume; every node runs")
        case .unreadable(let path):
            warn("--resume: the record of the last run (\(path)) cannot be read; every node runs")
        }
        return nil
    }

    /// The plan, and for a graph with `sources` what a run would do to each
    /// node (the forecast `moon status` prints); only "nothing to do" when
    /// every node is up to date, as `ninja -n` and `make -n` say.
    private func printDryRun(_ plan: Plan, store: StateStore?, storeMissing: Bool, forced: Set<Int>) {
        let graph = plan.graph
        guard graph.nodes.contains(where: { !$0.sources.isEmpty }) else {
            Console.write(GraphRenderer.dryRun(plan))
            return
        }
        // Without a store no node is known to be up to date: each will run,
        // and fingerprinting the sources could not say otherwise, unless
        // the output cache may restore some.
        let outputCache = cache.directory(for: graph)
        guard store != nil || outputCache?.hasEntries == true else {
            let runs = RunForecast.Verdict.runs(reason: "").label
            Console.write(GraphRenderer.dryRun(plan, states: Dictionary(uniqueKeysWithValues: plan.startOrder.map { ($0, runs) })))
            return
        }
        let state = IncrementalState(graph: graph, store: store, force: force, forcing: forced, onWarning: warn)
        let forecast = RunForecast(plan: plan, state: state, storeMissing: storeMissing)
        let counts = forecast.counts
        if counts.runs == 0 && counts.mayRun == 0 {
            let all = counts.upToDate == 1 ? "its node is" : "all \(counts.upToDate) nodes are"
            Console.line("dry run: graph \(graph.name), nothing to do: \(all) up to date")
            return
        }
        let restorable = CacheForecast.restorable(plan: plan, state: state, forecast: forecast, cache: outputCache)
        var labels = forecast.verdicts.mapValues(\.label)
        for index in restorable { labels[index] = CacheForecast.label }
        Console.write(GraphRenderer.dryRun(plan, states: labels))
    }
}
