import ArgumentParser
import Foundation
import MoonGraph
import MoonReport
import MoonRun
import MoonSession
import MoonState

/// `moon run [FILE] [NODE...]`: runs the graph, or only NODEs and their needs.
/// One thread, in order: the command line, the graph file, the state store,
/// the run.
struct RunCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a graph, or only the given nodes and what they need.",
        discussion: """
        FILE defaults to the nearest moon.yaml or moon.yml: in the current directory \
        or the closest one above it (paths in it stay relative to it). The first \
        argument is FILE when it ends in .yaml/.yml or contains a '/'; a bare name is \
        a node of that default file when there is one, even when a file of that name \
        exists (moon run lua runs the node lua beside a built lua; moon run ./lua \
        reads the file), and FILE when there is no default file and a file of that \
        name exists.

        Without NODE, moon runs the file's default: nodes, else every node. A NODE is \
        a name, a fan-out's name (all its instances) or a quoted glob over names \
        ('test[*]', 'lib:*'; * any characters, ? one). NAME=VALUE after a node sets \
        its parameter (moon run deploy env=prod version=1.4); the words after -- go \
        to the last node named, as ${{ args }} (moon run test -- -k fast). \
        --exclude PATTERN takes nodes out of the selection; a node that a selected \
        node needs still runs. internal: nodes run only when needed.

        Exit codes: 0 every node succeeded, 1 a node failed, 2 invalid graph or \
        command line, 130 interrupted (SIGINT), 143 terminated (SIGTERM), 129 hung up \
        (SIGHUP), 131 quit (SIGQUIT, Ctrl-\\), 141 stdout closed; the summary then says \
        interrupted, not FAILED. Ctrl-Z stops the nodes with moon; fg resumes them.

        A fan-out's line counts its instances: ✓ test 24/24 2.1s, ✓ test 24/24 up to \
        date, ✓ test 24/24 (20 up to date, 1 restored) 1.2s, ✗ test 21/24 (1 failed, \
        2 canceled) 3.4s. The last line counts nodes and instances by how they ended: \
        moon: ok - 3 succeeded, 29 up to date in 1.2s. -v, -n, the failure summary and \
        the start event show each command whole, with its known values put in.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to run, each followed by its NAME=VALUE parameters "
                                 + "(default: the file's default:, else all). After --, words for the last node's ${{ args }}.",
                                 valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    /// `-j8` as make and ninja users type it, and `-j 8`.
    @Option(name: [.customShort("j", allowingJoined: true), .long], help: "Run at most N nodes at once, across all queues.")
    var jobs: Int?

    @Flag(name: .shortAndLong, help: "After a failure, keep running whatever does not depend on it.")
    var keepGoing = false

    @Flag(name: [.customShort("n"), .long], help: "Print the plan in the order it would start, each node marked will run, may run or up to date (as moon status says); start nothing.")
    var dryRun = false

    @OptionGroup var report: ReportOptions

    @Option(help: ArgumentHelp("A limit for the whole run, e.g. 10m.", valueName: "duration"))
    var timeout: String?

    @Option(help: ArgumentHelp("How long a cancelled node has between SIGTERM and SIGKILL.", valueName: "duration"))
    var grace: String = "5s"

    @OptionGroup var vars: VarOverrides

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Rerun only what failed, was canceled or skipped in the last run; the rest keeps that run's outputs and values.")
    var resume = false

    @OptionGroup var selection: SelectionOptions
    @OptionGroup(title: "Watch mode") var watch: WatchOptions

    @Flag(name: [.customShort("B"), .long], help: "Run every node, also those whose sources are up to date.")
    var force = false

    @Flag(name: .customLong("force-only"),
          help: "Run the nodes named on the command line even when up to date, as -B does, but not their needs: those run only when not up to date.")
    var forceOnly = false

    @Option(name: .customLong("stall-after"),
            help: ArgumentHelp("On a terminal, mark a running node as stalled after this long without output (0: never).",
                               valueName: "duration"))
    var stallAfter: String = "30s"

    func validate() throws {
        _ = try options()
        _ = try duration(stallAfter, option: "--stall-after")
        _ = try vars.values()
        // With --json, stdout carries only events (DESIGN.md §5); a dry run
        // has none, and its text plan there would break every reader of the
        // stream. The plan as JSON is `moon graph`'s.
        if dryRun && report.isJSON {
            throw ValidationError("--dry-run prints the plan as text and starts nothing, so it has no events for --json; "
                + "for the plan as JSON, use 'moon graph --format json' with the same file, nodes and --set values")
        }
        if dryRun && watch.watch { throw ValidationError("--dry-run starts nothing, so it has nothing to --watch") }
        if forceOnly && watch.watch {
            throw ValidationError("--force-only forces one run's named nodes; in watch mode, use -B to force the first run, or leave it out")
        }
    }

    /// How the run behaves as a whole: `-j`, `-k`, `--grace`, `--timeout`.
    func options() throws -> RunOptions {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        var options = RunOptions(jobs: jobs, keepGoing: keepGoing, grace: try duration(grace, option: "--grace"))
        if let timeout {
            options.timeout = try duration(timeout, option: "--timeout")
            // As a node's `timeout: 0s`: a run that may not start is a mistake.
            if options.timeout! <= .zero {
                throw ValidationError("--timeout must be longer than 0s; leave it out for no time limit")
            }
        }
        return options
    }

    private func duration(_ text: String, option: String) throws -> Duration {
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option): '\(text)' is not a duration (use 250ms, 2s, 1m30s, 1h or a number of seconds)")
        }
    }

    /// `passthrough`: the words after `--` that follow a NODE (`Moon.parse`), for the last node's `${{ args }}`.
    func run(passthrough: [String]) throws {
        let (path, names) = try GraphFileLocator.split(arguments)
        let file = try GraphFile.load(path, overrides: try vars.values(), color: Terminal.stderrColor(report.color))
        try run(file, words: names, passthrough: passthrough)
    }

    /// Runs the nodes `words` select in `file`, loaded already (plain `moon` loads it to find its `default:`).
    func run(_ file: GraphFile, words: [String], passthrough: [String] = []) throws {
        // Diagnostics on stderr follow --color too.
        let diagnosticsColor = Terminal.stderrColor(report.color)
        let graph = file.graph
        // A dry run only reads the store (recorded durations order the plan);
        // a run makes it, once the file proved valid.
        let opened = StateStore.open(graphDirectory: graph.directory, create: !dryRun)
        if let warning = opened.warning { warn(warning) }
        let store = opened.store
        let weights = PriorityWeights.read(for: graph, from: store)
        let plan = try GraphFileLocator.plan(for: file, words: words, passthrough: passthrough, selection: selection,
                                             requireAll: true, weights: weights, color: diagnosticsColor)
        let forced = forceOnly ? try namedNodes(words, passthrough: passthrough, plan: plan) : []
        if dryRun {
            printDryRun(plan, store: store, storeMissing: store == nil && opened.warning == nil, forced: forced)
            return
        }
        if watch.watch {
            let setup = WatchSetup(graphPath: file.source.path, words: words, passthrough: passthrough, exclude: selection.exclude,
                                   commands: Moon.commandNames, overrides: try vars.values(), options: try options(), report: report,
                                   watch: try watch.values(), stallAfter: try duration(stallAfter, option: "--stall-after"),
                                   force: force, diagnosticsColor: diagnosticsColor, store: store,
                                   cache: { [cache] in cache.outputCache(for: $0) }, resume: resume ? lastRun(of: plan.graph) : nil)
            let main = try MainLoop()
            throw ExitCode(try WatchSession(setup: setup, file: file, plan: plan, main: main).run())
        }
        let execution = RunSession(plan: plan, options: try options(), report: report,
                                 stallAfter: try duration(stallAfter, option: "--stall-after"),
                                 state: IncrementalState(graph: plan.graph, store: store, force: force, forcing: forced, onWarning: warn),
                                 store: store,
                                 cache: cache.outputCache(for: plan.graph),
                                 resume: resume ? lastRun(of: plan.graph) : nil, main: try MainLoop())
        let code = try execution.run()
        if code != 0 { throw ExitCode(code) }
    }

    /// `--force-only`: the graph nodes the command line names (a fan-out:
    /// all its instances); without names, every node the run selects.
    private func namedNodes(_ words: [String], passthrough: [String], plan: Plan) throws -> Set<Int> {
        let graph = plan.graph
        let named = try NodeSelection.make(names: words, passthrough: passthrough, exclude: selection.exclude, graph: graph)
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
