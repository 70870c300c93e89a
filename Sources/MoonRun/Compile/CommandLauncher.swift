import Dispatch
import Foundation
import MoonCommand
import MoonGraph
import MoonProcess

/// The real `NodeLauncher`: compiles each selected node into a `NodeCommand`
/// once, and executes it per attempt with callbacks delivered on the
/// runner's scheduler.
public final class CommandLauncher: NodeLauncher {
    /// Per selected node, its command while an attempt runs (made when the
    /// attempt starts, dropped when it ends: commands of all nodes, made up
    /// front and kept, were about 1.5 MB per 1000 nodes). Touched only in `start`, which the
    /// runner calls on its scheduler.
    private var commands: [NodeCommand?]
    private let makeCommand: (Int) -> NodeCommand
    /// Per command: whether its node runs on a Slurm queue.
    private let onSlurm: [Bool]
    private let scheduler: DateScheduler
    private let grace: Duration
    /// Backpressure for output, when the launcher's callbacks and the
    /// runner are on different threads (nil on moon's event loop: there the
    /// loop reports what it read before it reads again).
    private let credit: OutputCredit?
    /// Holds every attempt's `$MOON_OUTPUT` file; removed with the launcher.
    private let outputDirectory: String?

    /// `plan.selected` decides which graph nodes become commands; their
    /// order matches `RunPlan(graph:plan:cpus:)`.
    public init(graph: Graph, plan: Plan, processes: ProcessLaunching, scheduler: DateScheduler, grace: Duration,
                environment base: [String: String]? = nil, executeOn executor: Scheduler? = nil) {
        let environment = base.map { NodeEnvironment(graph: graph, base: $0) } ?? NodeEnvironment(graph: graph)
        // Where commands run (and spawn their processes). moon passes its
        // event loop, where the runner also runs: a child's exit, the
        // runner's decision and the next spawn then happen on one thread.
        let spawner = executor ?? QueueScheduler(label: "moon.spawn", qos: .userInitiated)
        let outputDirectory = Self.makeTemporaryDirectory()
        let outputWatch = outputDirectory.flatMap { OutputWatch(directory: $0) }
        let credit: OutputCredit? = scheduler is LoopScheduler ? nil : OutputCredit()
        let selected = plan.selected
        commands = Array(repeating: nil, count: selected.count)
        makeCommand = { node in
            NodeCommand(node: graph.nodes[selected[node]], environment: environment, processes: processes,
                        scheduler: scheduler, executeOn: spawner, outputDirectory: outputDirectory,
                        outputWatch: outputWatch, credit: credit)
        }
        self.credit = credit
        // Built-ins run in moon even on a Slurm queue: they start at once.
        onSlurm = plan.selected.map { index in
            let node = graph.nodes[index]
            if case .builtin = node.action { return false }
            return graph.slurmOptions(for: node) != nil
        }
        self.outputDirectory = outputDirectory
        self.scheduler = scheduler
        self.grace = grace
    }

    deinit {
        if let outputDirectory { TemporaryDirectories.remove(outputDirectory) }
    }

    /// `$TMPDIR/moon-XXXXXX`, private to the user (mkdtemp makes it 0700).
    private static func makeTemporaryDirectory() -> String? {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty { base = "/tmp" }
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/moon-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let made = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: made)
        }
        if let path { TemporaryDirectories.add(path) }
        return path
    }

    /// A node on a Slurm queue announces its `start` once srun has named its job.
    public func announcesStart(node: Int) -> Bool {
        onSlurm[node]
    }

    public func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle {
        let control = AttemptControl(grace: grace)
        let attemptState = AttemptState(launcher: self, node: node, events: events)
        control.onBuiltinCanceled = { [scheduler, attemptState] in
            scheduler.schedule { attemptState.finish(.failure(NodeError(.canceled, "canceled"))) }
        }
        let input = NodeCommand.Input(attempt: attempt, inputs: inputs, control: control)
        let command: NodeCommand
        if let made = commands[node] {
            command = made
        } else {
            command = makeCommand(node)
            commands[node] = command
        }
        command.execute(input, callbackOn: scheduler) { [attemptState] _, output, error, isCompleted in
            attemptState.receive(output, error, isCompleted)
        }
        return control
    }

    /// The attempt is over: drop the command (a retry makes it anew), so a
    /// run keeps commands only for nodes in flight.
    fileprivate func ended(node: Int) {
        commands[node] = nil
    }

    /// What one attempt has reported so far, and where it reports to: one
    /// object per attempt, shared by its callbacks.
    private final class AttemptState {
        weak var launcher: CommandLauncher?
        let node: Int
        let events: AttemptEvents
        var exitCode: Int32?
        var outputs: [KeyValue] = []
        var ended = false

        init(launcher: CommandLauncher, node: Int, events: AttemptEvents) {
            self.launcher = launcher
            self.node = node
            self.events = events
        }

        func receive(_ output: NodeOutput?, _ error: Error?, _ isCompleted: Bool) {
            if let output {
                switch output {
                case .line(let stream, let text, let continued):
                    events.next(stream, text, continued)
                    launcher?.credit?.give()
                case .value(let value): events.next(.value, value, false)
                case .exited(let code): exitCode = code
                case .outputs(let values): outputs = values
                case .job(let id): events.started(id)
                }
            } else if let error {
                let nodeError = error as? NodeError ?? NodeError(.canceled, "\(error)")
                finish(.failure(nodeError))
            } else if isCompleted {
                finish(.success(exitCode: exitCode, outputs: outputs))
            }
        }

        func finish(_ result: AttemptResult) {
            guard !ended else { return }
            ended = true
            launcher?.ended(node: node)
            events.finish(result)
        }
    }
}

/// The output directories still to remove. The launcher removes its own when
/// it is released; moon usually exits before that, so an `atexit` handler
/// removes whatever is left.
enum TemporaryDirectories {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: Set<String> = []
    nonisolated(unsafe) private static var registered = false

    static func add(_ path: String) {
        lock.lock()
        defer { lock.unlock() }
        paths.insert(path)
        if !registered {
            registered = true
            atexit { TemporaryDirectories.removeAll() }
        }
    }

    static func remove(_ path: String) {
        lock.lock()
        let known = paths.remove(path) != nil
        lock.unlock()
        if known { delete(path) }
    }

    static func removeAll() {
        lock.lock()
        let all = paths
        paths = []
        lock.unlock()
        for path in all { delete(path) }
    }

    /// Usually the directory is empty (nodes that write outputs are few, and
    /// their files are consumed): one `rmdir`. FileManager's recursive
    /// removal cost ~0.6 ms, after the last node, at every run's end.
    private static func delete(_ path: String) {
        if rmdir(path) == 0 || errno == ENOENT { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}
