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
        let outputs = OutputDirectory.take()
        let outputDirectory = outputs.path
        let outputWatch = outputs.watch
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

    /// A node on a Slurm queue announces its `start` once srun has named its job.
    public func announcesStart(node: Int) -> Bool {
        onSlurm[node]
    }

    public func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle {
        let control = AttemptControl(grace: grace)
        let attemptState = AttemptState(launcher: self, node: node, events: events)
        control.onCanceledWithoutProcess = { [scheduler, attemptState] in
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
                case .partial(let stream, let text): events.partial(stream, text)
                case .value(let value): events.next(.value, value, false)
                case .exited(let code): exitCode = code
                case .outputs(let values): outputs = values
                case .job(let id): events.started(id)
                case .waiting(let waiting): events.waiting(waiting)
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
