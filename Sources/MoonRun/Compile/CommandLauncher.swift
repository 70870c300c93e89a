import MoonCommand
import MoonEvents
import MoonGraph
import MoonProcess

/// The real `NodeLauncher`: each attempt of a selected node is an execution
/// of the node's `NodeCommand`, whose signal the runner composes and
/// subscribes to. It makes the run's `$MOON_OUTPUT` directory and removes
/// it when released.
public final class CommandLauncher: NodeLauncher {
    private let graph: Graph
    /// Plan index -> graph index.
    private let selected: [Int]
    private let context: NodeCommand.Context
    /// Per plan index: whether its node runs on a Slurm queue.
    private var onSlurm: [Bool]
    /// The instances of dynamic fan-outs, made during the run: plan index `selected.count + i` is `made[i]`.
    private var made: [Node] = []
    /// Made per start rather than for the whole plan: a run that finds its
    /// nodes up to date shows no command.
    private var preview: CommandPreview

    /// `plan.selected` decides which graph nodes run; their order matches
    /// `RunPlan(graph:plan:cpus:)`. Commands run on `scheduler`, the
    /// runner's. moon runs it on the event loop where `processes` reports
    /// (a child's exit, the runner's decision and the next spawn on one
    /// thread); a scheduler elsewhere needs `hopsThreads`: events then hop
    /// to it, and output is throttled while lines are in flight.
    public init(graph: Graph, plan: Plan, processes: ProcessLaunching, scheduler: DateScheduler, grace: Duration,
                environment base: [String: String]? = nil, hopsThreads: Bool = false) {
        self.graph = graph
        selected = plan.selected
        preview = CommandPreview(graph: graph)
        context = NodeCommand.Context(
            environment: base.map { NodeEnvironment(graph: graph, base: $0) } ?? NodeEnvironment(graph: graph),
            processes: processes, scheduler: scheduler, grace: grace, groups: NodeProcesses(),
            outputs: OutputDirectory(), credit: hopsThreads ? OutputCredit() : nil)
        // Built-ins run in moon even on a Slurm queue: they start at once.
        onSlurm = plan.selected.map { index in
            let node = graph.nodes[index]
            if case .builtin = node.action { return false }
            if case .group = node.action { return false }
            return graph.slurmOptions(for: node) != nil
        }
    }

    deinit {
        context.outputs?.remove()
    }

    public func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
        let spec = self.node(node)
        let command = NodeCommand(node: spec, index: node, context: context)
        // The command's signal holds it weakly: the subscription keeps it.
        let signal = command.signal(NodeCommand.Input(attempt: number, inputs: inputs))
            .on(disposed: { withExtendedLifetime(command) {} })
        guard let credit = context.credit else { return signal }
        return signal.deliverOn(context.scheduler).on(next: { output in
            if case .line = output { credit.give() }
        })
    }

    public func settled(node: Int) -> Signal<Never> {
        let settled = context.groups.settled(node)
        return context.credit == nil ? settled : settled.deliverOn(context.scheduler)
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
        context.groups.killAll()
    }

    /// A node on a Slurm queue announces its `start` once srun has named its job.
    public func announcesStart(node: Int) -> Bool {
        onSlurm[node]
    }
}
