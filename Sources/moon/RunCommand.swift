import ArgumentParser
import Foundation
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonState

/// `moon run [FILE] [NODE...]`: runs the graph, or only NODEs and their needs.
struct RunCommand: ParsableCommand {
    // `_superCommandName`: `EarlyGraph` parses `moon run`'s arguments with
    // this command as the root, and swift-argument-parser then first parses
    // them twice more, looking for `--generate-completion-script` (~0.5 ms
    // of reflection on the parser's thread at every start), unless the root
    // names a super-command. That request still works: it fails this parse,
    // and the root command's parser, which looks for it, runs next. Help and
    // usage are built from the root command `moon`, as before.
    static let configuration = CommandConfiguration(
        commandName: "run",
        _superCommandName: "moon",
        abstract: "Run a graph, or only the given nodes and what they need.",
        discussion: """
        FILE defaults to moon.yaml or moon.yml in the current directory; the first \
        argument is taken as FILE when it ends in .yaml/.yml or names an existing file.

        Exit codes: 0 every node succeeded, 1 a node failed, 2 invalid graph or \
        command line, 130 interrupted (SIGINT), 143 terminated (SIGTERM).
        """)

    enum OutputMode: String, ExpressibleByArgument, CaseIterable {
        case auto, tty, plain, json
    }

    enum ColorMode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Argument(help: ArgumentHelp("The graph file, then the nodes to run (default: all).", valueName: "file-or-node"))
    var arguments: [String] = []

    @Option(name: .shortAndLong, help: "Run at most N nodes at once, across all queues.")
    var jobs: Int?

    @Flag(name: .shortAndLong, help: "After a failure, keep running whatever does not depend on it.")
    var keepGoing = false

    @Flag(name: [.customShort("n"), .long], help: "Print the plan in the order it would start; start nothing.")
    var dryRun = false

    @Option(help: "How to report: auto (tty on a terminal, else plain), tty, plain or json.")
    var output: OutputMode = .auto

    @Flag(help: "Events as JSON Lines on stdout (same as --output json).")
    var json = false

    @Option(help: "Colour: auto, always or never (NO_COLOR also turns it off).")
    var color: ColorMode = .auto

    @Option(help: ArgumentHelp("A limit for the whole run, e.g. 10m.", valueName: "duration"))
    var timeout: String?

    @Option(help: ArgumentHelp("How long a cancelled node has between SIGTERM and SIGKILL.", valueName: "duration"))
    var grace: String = "5s"

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a var of the file.", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    @Flag(name: [.customShort("B"), .long], help: "Run every node, also those whose sources are up to date.")
    var force = false

    @Option(name: .customLong("output-mode"), help: "prefixed (each line as it comes, with its node) or grouped (each node's output together when it ends).")
    var outputMode: NodeOutputMode = .prefixed

    @Option(name: .customLong("stall-after"),
            help: ArgumentHelp("On a terminal, mark a running node as stalled after this long without output (0: never).",
                               valueName: "duration"))
    var stallAfter: String = "30s"

    @Flag(name: .shortAndLong, help: "Show only failures and the summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also show each command as it starts.")
    var verbose = false

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        _ = try parsedDuration(grace, option: "--grace")
        _ = try parsedDuration(stallAfter, option: "--stall-after")
        if let timeout { _ = try parsedDuration(timeout, option: "--timeout") }
        _ = try overrides()
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together") }
    }

    func parsedDuration(_ text: String, option: String) throws -> Duration {
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option): '\(text)' is not a duration (use 250ms, 2s, 1m30s, 1h or a number of seconds)")
        }
    }

    func overrides() throws -> [String: String] {
        var result: [String: String] = [:]
        for assignment in assignments {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
                throw ValidationError("--set expects KEY=VALUE, got '\(assignment)'")
            }
            result[String(assignment[..<eq])] = String(assignment[assignment.index(after: eq)...])
        }
        return result
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
        if let started = EarlyGraph.matching(EarlyGraph.Guess(path: path, overrides: overrides, dryRun: dryRun)) {
            early = started.store
            file = try GraphFile.finish(started.result)
        } else {
            early = EarlyStore(graphPath: path, create: !dryRun)
            file = try GraphFile.finish(GraphFile.parse(path, overrides: overrides))
        }
        let (opened, durations) = early.result() ?? Self.openStore(file.graph, create: !dryRun)
        if let warning = opened.warning { warn(warning) }
        let store = opened.store
        let plan: Plan
        do {
            let weights = durations.flatMap { PriorityWeights.weights(for: file.graph, durations: $0) }
            plan = try Plan.make(graph: file.graph, targets: targets, weights: weights)
        } catch {
            GraphFile.print(error.items, source: file.source, color: Terminal.stderrColor)
            throw MoonExit.invalid
        }
        if dryRun {
            print(GraphRenderer.dryRun(file.graph, plan: plan), terminator: "")
            return
        }
        var options = RunOptions(jobs: jobs, keepGoing: keepGoing, grace: try parsedDuration(grace, option: "--grace"))
        if let timeout { options.timeout = try parsedDuration(timeout, option: "--timeout") }
        let state = IncrementalState(graph: file.graph, store: store, force: force, onWarning: warn)
        // Up-to-date checks read and write through GRDB: its queue is made
        // meanwhile, off the loop's path (only graphs with `sources` need it).
        if let store, file.graph.nodes.contains(where: { !$0.sources.isEmpty }) {
            BackgroundThread.run(name: "moon.store") { store.prepareQueue() }
        }
        let session = RunSession(graph: file.graph, plan: plan, options: options, reporterKind: reporterKind(), verbosity: verbosity,
                                 state: state, store: store)
        session.outputMode = outputMode
        session.stallAfter = try parsedDuration(stallAfter, option: "--stall-after")
        session.color = ColorPolicy.resolve(ColorPolicy.Choice(rawValue: color.rawValue) ?? .auto,
                                            environment: Terminal.colorEnvironment, fd: 1).enabled
        // Loading left freed memory behind (the YAML tree of a large file);
        // hand it back before the run, so the run's own memory comes on top
        // of what is live, not of the loading's peak.
        LinuxCalls.trimHeap()
        throw MoonExit(code: session.run())
    }


    /// Opens the store of the graph at `graphPath` and reads its recorded
    /// durations (which give the critical-path weights).
    static func openStore(graphPath: String, create: Bool) -> (StateStore.Opened, [String: Int]?) {
        let opened = StateStore.open(graphDirectory: Graph.directory(of: graphPath), create: create)
        let key = graphPath.split(separator: "/").last.map(String.init) ?? graphPath
        return (opened, opened.store.flatMap { try? $0.lastDurations(graph: key) })
    }

    static func openStore(_ graph: Graph, create: Bool) -> (StateStore.Opened, [String: Int]?) {
        openStore(graphPath: graph.path, create: create)
    }

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
