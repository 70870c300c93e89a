import ArgumentParser
import Foundation
import MoonGraph
import MoonJSON
import MoonRun
import MoonSession
import MoonState
import MoonSystem

/// `moon simulate [FILE] [NODE...] [-j N[,N...]] [--memory SIZE] [--json]`:
/// the run's scheduler on virtual time with the recorded durations
/// (`Simulation`): the predicted wall time, critical path, queue use and
/// longest waits, for each `-j`, without starting anything or writing state.
struct SimulateCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Predict a run's wall time, critical path, queue use and waits from recorded durations; start nothing.",
        discussion: """
        Runs moon's scheduler on virtual time: each node takes the duration of its last \
        successful run (.moon/state.db), an instance of a fan-out never seen the median of \
        its recorded siblings, any other node never seen 1s. Every node is taken to run \
        (as with --force) and to succeed at once. Several -j values (-j 1,2,4) are \
        simulated side by side. Changes nothing.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to simulate (default: the file's default:, else all).",
                                 valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @Option(name: [.customShort("j", allowingJoined: true), .long],
            help: ArgumentHelp("The -j values to simulate, separated by commas (default: as moon run, no -j).", valueName: "n[,n...]"))
    var jobs: String?

    @Option(help: ArgumentHelp("The memory budget (default: MOON_MEMORY, else what is available now).", valueName: "size"))
    var memory: String?

    @Flag(help: "Print one JSON object per -j value, one per line.")
    var json = false

    @OptionGroup var vars: VarOverrides
    @OptionGroup var selection: SelectionOptions

    func validate() throws { _ = try jobValues() }

    /// `-j 1,2,4`; [nil] when not given.
    func jobValues() throws -> [Int?] {
        guard let jobs else { return [nil] }
        return try jobs.split(separator: ",", omittingEmptySubsequences: false).map { word in
            guard let n = Int(word.trimmingCharacters(in: .whitespaces)), n >= 1 else {
                throw ValidationError("-j: '\(jobs)' is not a list of job counts; write numbers of at least 1, like -j 1,2,4")
            }
            return n
        }
    }

    func run(passthrough: [String]) throws {
        let (path, words) = try GraphFileLocator.split(arguments)
        let file = try GraphFile.load(path, overrides: try vars.values())
        let graph = file.graph
        // Read only: a graph never run has no store, and every node its default.
        let opened = StateStore.open(graphDirectory: graph.directory, create: false)
        if let warning = opened.warning { warn(warning) }
        let durations = opened.store.flatMap { try? $0.lastDurations(graph: StateStore.graphKey(forGraphAt: graph.path)) } ?? [:]
        let plan = try GraphFileLocator.plan(for: file, words: words, passthrough: passthrough, exclude: selection.exclude, requireAll: false,
                                             weights: PriorityWeights.weights(for: graph, durations: durations),
                                             color: Terminal.stderrColor, commands: Moon.commandNames)
        let simulation = Simulation(plan: RunPlan(graph: plan.graph, plan: plan, cpus: LinuxCalls.processorCount()), durations: durations)
        var request = RunRequest()
        request.memory = memory
        var options = RunOptions()
        options.resources.memory = try request.memoryBudget()
        options.resources.available = request.availableMemory()
        options.resources.learned = LearnedResources(graph: graph, store: opened.store).memory
        let results = try jobValues().map { jobs -> Simulation.Result in
            options.jobs = jobs
            return simulation.run(options: options)
        }
        if json {
            for result in results { Console.line(Self.json(result)) }
        } else {
            for line in Self.text(results, simulation: simulation) { Console.line(line) }
        }
    }

    static func json(_ result: Simulation.Result) -> String {
        func string(_ s: String) -> String {
            var out = ""
            JSONString.quote(s, into: &out)
            return out
        }
        let queues = result.queues.map {
            "{\"name\":\(string($0.name)),\"capacity\":\($0.capacity),\"utilisation\":\(Double(Int($0.utilisation * 1000)) / 1000)}"
        }
        let waits = result.waits.prefix(10).map { "{\"node\":\(string($0.node)),\"wait_ms\":\($0.milliseconds),\"for\":\(string($0.reason))}" }
        return "{\"jobs\":\(result.jobs.map(String.init) ?? "null"),\"wall_ms\":\(result.wallMilliseconds),"
            + "\"critical_path\":[\(result.criticalPath.map(string).joined(separator: ","))],"
            + "\"memory_bytes\":\(result.memory.map(String.init) ?? "null"),\"nodes\":\(result.nodes),"
            + "\"queues\":[\(queues.joined(separator: ","))],\"waits\":[\(waits.joined(separator: ","))]}"
    }

    static func seconds(_ milliseconds: Int) -> String {
        DurationText.format(.milliseconds(milliseconds), .measured)
    }

    static func text(_ results: [Simulation.Result], simulation: Simulation) -> [String] {
        let counted = simulation.plan.nodes.indices.filter { !simulation.plan.nodes[$0].isGroup && !simulation.plan.nodes[$0].isBarrier }
        let guessed = counted.filter { simulation.estimates[$0].source != .recorded }
        var lines = ["\(counted.count) node\(counted.count == 1 ? "" : "s") simulated: \(counted.count - guessed.count) from recorded durations"
            + (guessed.isEmpty ? "" : ", \(guessed.count) never seen (a fan-out sibling's median, else \(seconds(Int(Simulation.defaultDuration * 1000))))")]
        let first = results.first?.wallMilliseconds ?? 0
        for result in results {
            lines.append("")
            var head = (result.jobs.map { "-j \($0)" } ?? "no -j") + ": \(seconds(result.wallMilliseconds))"
            if result.jobs != results.first?.jobs, result.wallMilliseconds > 0, first > 0 {
                head += String(format: " (%.2fx of %@)", Double(result.wallMilliseconds) / Double(first),
                               results.first?.jobs.map { "-j \($0)" } ?? "no -j")
            }
            if let memory = result.memory { head += ", memory budget \(ByteSize.text(memory))" }
            lines.append(head)
            if !result.criticalPath.isEmpty { lines.append("  critical path: " + result.criticalPath.joined(separator: " → ")) }
            let queues = result.queues.map { "\($0.name) \(Int(($0.utilisation * 100).rounded()))% of \($0.capacity == .max ? "∞" : String($0.capacity))" }
            if !queues.isEmpty { lines.append("  queues busy: " + queues.joined(separator: ", ")) }
            let waits = result.waits.prefix(5).map { "\($0.node) \(seconds($0.milliseconds)) for \($0.reason)" }
            lines.append("  longest waits: " + (waits.isEmpty ? "none" : waits.joined(separator: "; ")))
        }
        return lines
    }
}
