import MoonCommand
import MoonEvents
import MoonGraph
import MoonProcess

/// The real `NodeLauncher`: each node that runs has one `NodeCommand`, made
/// at its first attempt and kept for the node's part of the run (until
/// `release(node:)`); each attempt (a retry too) is an execution of it,
/// whose signal the runner composes and subscribes to. A command refuses a
/// second execution while one is in flight, and releasing the launcher
/// releases the commands, which cancels what still runs (SIGTERM, grace,
/// SIGKILL). It makes the run's `$MOON_OUTPUT` directory and removes it
/// when released.
public final class CommandLauncher: NodeLauncher {
    private let graph: Graph
    /// Plan index -> graph index.
    private let selected: [Int]
    /// What every node's command shares, made when the first node starts:
    /// a run whose nodes are all up to date reads no environment for them.
    private lazy var context = NodeCommand.Context(environment: makeEnvironment(), processes: processes, scheduler: scheduler, grace: grace,
                                                   groups: groups, outputs: outputs, terminal: terminal, slurm: SlurmRunReading(slurm))
    private let makeEnvironment: () -> NodeEnvironment
    private let processes: ProcessLaunching
    private let scheduler: DateScheduler
    private let grace: Duration
    private let groups = NodeProcesses()
    private let outputs = OutputDirectory()
    private let terminal: (() -> TerminalUse)?
    private let slurm: SlurmRunOptions
    /// Per plan index: whether its node runs on a Slurm queue.
    private var onSlurm: [Bool]
    /// The instances of dynamic fan-outs, made during the run: plan index `selected.count + i` is `made[i]`.
    private var made: [Node] = []
    /// Made per start rather than for the whole plan: a run that finds its
    /// nodes up to date shows no command.
    private var preview: CommandPreview
    /// By plan index: the node's command while its part of the run lasts
    /// (a node found up to date makes none). A dictionary, empty until a
    /// node starts: a run that starts none never makes NodeCommand's type.
    private(set) var commands: [Int: NodeCommand] = [:]

    /// `plan.selected` decides which graph nodes run; their order matches
    /// `RunPlan(graph:plan:cpus:)`. Commands run on `scheduler`, the
    /// runner's, which must be where `processes` reports (moon's event
    /// loop: a child's exit, the runner's decision and the next spawn on
    /// one thread, with no hop and no backpressure to arrange).
    /// `secrets`: the values the run read for `${{ secrets.NAME }}`.
    /// `slurm`: what Slurm nodes learned, and their tasks' reporter.
    public init(graph: Graph, plan: Plan, processes: ProcessLaunching, scheduler: DateScheduler, grace: Duration,
                environment base: [String: String]? = nil, secrets: SecretValues = SecretValues(),
                terminal: (() -> TerminalUse)? = nil, slurm: SlurmRunOptions = SlurmRunOptions()) {
        self.graph = graph
        selected = plan.selected
        preview = CommandPreview(graph: graph)
        makeEnvironment = { base.map { NodeEnvironment(graph: graph, base: $0, secrets: secrets) } ?? NodeEnvironment(graph: graph, secrets: secrets) }
        self.processes = processes
        self.scheduler = scheduler
        self.grace = grace
        self.terminal = terminal
        self.slurm = slurm
        // Built-ins run in moon even on a Slurm queue: they start at once.
        // (As `graph.slurmOptions(for:) != nil`, read field by field: a copy of each Node costs more than the rest.)
        onSlurm = plan.selected.map { index in
            switch graph.nodes[index].action {
            case .builtin, .group: return false
            case .shell, .exec: return graph.queues[graph.nodes[index].queue].slurm != nil
            }
        }
    }

    deinit {
        // Released first, the commands cancel what still runs.
        commands.removeAll()
        outputs.remove()
    }

    /// An execution of the node's command. Its signal holds the command
    /// weakly: only the launcher keeps it.
    public func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
        command(for: node).signal(NodeCommand.Input(attempt: number, inputs: inputs))
    }

    /// The node's command, made at its first attempt.
    func command(for node: Int) -> NodeCommand {
        if let command = commands[node] { return command }
        let command = NodeCommand(node: self.node(node), index: node, context: context)
        commands[node] = command
        return command
    }

    public func settled(node: Int) -> Signal<Never> {
        groups.settled(node)
    }

    public func release(node: Int) {
        commands[node] = nil
    }

    public func usage(node: Int) -> NodeUsage? {
        groups.takeUsage(node)
    }

    /// Each item of a dynamic fan-out becomes a copy of its template that reads the item as `${{ item }}`.
    public func expand(template: Int, items: [String], first: Int) {
        // Its paths are parsed once, for all the items.
        made.reserveCapacity(made.count + items.count)
        made += graph.instances(ofDynamic: selected[template], items: items)
        onSlurm += repeatElement(onSlurm[template], count: items.count)
    }

    public func command(node: Int) -> String? {
        preview.command(of: self.node(node))
    }

    private func node(_ index: Int) -> Node {
        index < selected.count ? graph.nodes[selected[index]] : made[index - selected.count]
    }

    public func killNow() {
        groups.killAll()
    }

    /// A node on a Slurm queue announces its `start` once srun has named its job.
    public func announcesStart(node: Int) -> Bool {
        onSlurm[node]
    }
}
