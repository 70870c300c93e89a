import Dispatch
import MoonCommand
import MoonGraph
import MoonProcess

/// The real `NodeLauncher`: compiles each selected node into a `NodeCommand`
/// once, and executes it per attempt with callbacks delivered on the
/// runner's scheduler.
public final class CommandLauncher: NodeLauncher {
    private let commands: [NodeCommand]
    private let scheduler: DateScheduler
    private let grace: Duration

    /// `plan.selected` decides which graph nodes become commands; their
    /// order matches `RunPlan(graph:plan:cpus:)`.
    public init(graph: Graph, plan: Plan, processes: ProcessLaunching, scheduler: DateScheduler, grace: Duration,
                environment base: [String: String]? = nil, executeQueue: DispatchQueue? = nil) {
        let environment = base.map { NodeEnvironment(graph: graph, base: $0) } ?? NodeEnvironment(graph: graph)
        // Where commands run (and spawn their processes). moon passes the
        // runner's own queue: spawning is serial anyway, and staying on one
        // thread saves a thread wake-up per node (measured: the hop was a
        // visible part of the per-node latency with 1000 short nodes).
        let spawnQueue = executeQueue ?? DispatchQueue(label: "moon.spawn", qos: .userInitiated)
        commands = plan.selected.map { index in
            NodeCommand(node: graph.nodes[index], environment: environment, processes: processes,
                        scheduler: scheduler, executeQueue: spawnQueue)
        }
        self.scheduler = scheduler
        self.grace = grace
    }

    public func start(node: Int, attempt: Int, inputs: NodeInputs, events: AttemptEvents) -> AttemptHandle {
        let control = AttemptControl(grace: grace)
        var exitCode: Int32?
        var ended = false
        let finish: (AttemptResult) -> Void = { result in
            guard !ended else { return }
            ended = true
            events.finish(result)
        }
        control.onBuiltinCanceled = { [scheduler] in
            scheduler.schedule { finish(.failure(NodeError(.canceled, "canceled"))) }
        }
        let input = NodeCommand.Input(attempt: attempt, inputs: inputs, control: control)
        commands[node].execute(input, callbackOn: scheduler) { _, output, error, isCompleted in
            if let output {
                switch output {
                case .line(let stream, let text, let continued): events.next(stream, text, continued)
                case .value(let value): events.next(.value, value, false)
                case .exited(let code): exitCode = code
                }
            } else if let error {
                let nodeError = error as? NodeError ?? NodeError(.canceled, "\(error)")
                finish(.failure(nodeError))
            } else if isCompleted {
                finish(.success(exitCode: exitCode, outputs: []))
            }
        }
        return control
    }
}
