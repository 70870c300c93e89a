import MoonCommand
import MoonGraph
import MoonEvents

/// What the runner needs to know of one selected node: plain values taken
/// from the Graph and the Plan by `RunPlan.init(graph:plan:)`.
public struct RunNode: Sendable {
    public var name: String
    /// Index into `RunPlan.queues`.
    public var queue: Int
    /// Indices into `RunPlan.nodes`.
    public var needs: [Int]
    public var condition: RunCondition
    public var continueOnError: Bool
    public var retry: RetryPolicy
    public var timeout: Duration?
    /// Length of the longest path from this node to the end of the graph:
    /// among ready nodes the highest starts first (critical path).
    public var priority: Int
    /// The command as written, in one line: what `start` shows when the
    /// launcher makes no preview of it (`NodeLauncher.command(node:)`).
    public var command: String
    /// Whether its attempts read what their needs left (values, outputs,
    /// results): a built-in, or a `${{ … }}` in its command, `dir` or
    /// `env`. The runner gathers those inputs only for such nodes.
    public var readsInputs: Bool
    /// Set on an instance of a fan-out: its template and item (in its events).
    public var instance: RunEvent.Instance?
    /// A group runs nothing (no `run`, no `uses`): it succeeds as soon as
    /// its needs have, without a job.
    public var isGroup = false
    /// Set on a `for-each` over a need's output: the node is expanded into
    /// one instance per item when its needs have ended, and ends once they have.
    public var fanOut: FanOut?
    /// Set once a `fanOut` node has expanded: it stands for its instances,
    /// which the run's counts count instead of it.
    public var isExpanded = false
    /// `service: true`: not expected to end (see Runner+Live).
    public var isService = false
    /// The barrier the loader puts where a fan-out needs a whole fan-out
    /// (`Node.isBarrier`): a group the run emits no event for and does not count.
    public var isBarrier = false
    /// `uses:`: it reads the values of each of its needs, a barrier's instances included.
    public var isBuiltin = false
    /// `resources:`: the memory it is admitted with (nil: none counted) and
    /// the slots it takes of `-j` and of its queue (Runner+Admission).
    public var memory: Int64?
    public var slots = 1
    /// Its process runs on a Slurm compute node: the memory it declares or
    /// learned is asked of Slurm (`--mem`), not taken from the run's budget.
    public var onSlurm = false
    /// `interactive: true`: it holds moon's terminal while it runs (Runner+Terminal).
    public var isInteractive = false
    /// `confirm:`: the question asked before it starts (Runner+Terminal).
    public var confirm: String?

    /// Where a dynamic fan-out's items come from: `needs.NEED.outputs.KEY`,
    /// a JSON list of strings.
    public struct FanOut: Sendable, Equatable {
        /// Index into `RunPlan.nodes` (one of the node's needs).
        public var need: Int
        public var key: String

        public init(need: Int, key: String) {
            self.need = need
            self.key = key
        }
    }

    public init(name: String, queue: Int, needs: [Int], condition: RunCondition = .success, continueOnError: Bool = false,
                retry: RetryPolicy = .none, timeout: Duration? = nil, priority: Int = 0, command: String = "",
                readsInputs: Bool = true) {
        self.name = name
        self.queue = queue
        self.needs = needs
        self.condition = condition
        self.continueOnError = continueOnError
        self.retry = retry
        self.timeout = timeout
        self.priority = priority
        self.command = command
        self.readsInputs = readsInputs
    }
}

/// The selected part of a graph, ready to run: nodes in file order (so index
/// order breaks priority ties by file order) and the width of each queue.
public struct RunPlan: Sendable {
    public var graphName: String
    public var nodes: [RunNode]
    public var queues: [QueueWidth]

    public init(graphName: String, nodes: [RunNode], queues: [QueueWidth]) {
        self.graphName = graphName
        self.nodes = nodes
        self.queues = queues
    }
}

extension RunPlan {
    /// The selected nodes of `plan`, in file order, with their queues' widths
    /// on a machine with `cpus` processors.
    public init(graph: Graph, plan: Plan, cpus: Int) {
        var position = [Int](repeating: -1, count: graph.nodes.count)
        for (i, index) in plan.selected.enumerated() { position[index] = i }
        let nodes = plan.selected.map { index -> RunNode in
            let node = graph.nodes[index]
            var run = RunNode(name: node.name, queue: node.queue, needs: node.needs.map { position[$0] }.filter { $0 >= 0 },
                              condition: node.condition, continueOnError: node.continueOnError, retry: node.retry,
                              timeout: node.timeout, priority: plan.schedulingPriority(index), command: node.action.summary,
                              readsInputs: Self.readsInputs(node))
            run.instance = node.instance.map(RunEvent.Instance.init)
            if case .group = node.action { run.isGroup = true }
            run.isBarrier = node.isBarrier
            if case .builtin = node.action { run.isBuiltin = true }
            run.isService = node.isService
            let resources = node.resources
            switch node.action {
            case .shell, .exec: run.onSlurm = graph.queues[node.queue].slurm != nil
            case .builtin, .group: break
            }
            if !resources.isEmpty {
                run.memory = run.onSlurm ? nil : resources.memory
                run.slots = resources.cpus ?? 1
            }
            run.isInteractive = node.isInteractive
            run.confirm = node.confirm
            // (A dynamic fan-out's need is one of its needs, so it is selected with it.)
            run.fanOut = node.fanOut.map { RunNode.FanOut(need: position[$0.need], key: $0.key) }
            return run
        }
        let queues = graph.queues.map { QueueWidth(name: $0.name, concurrency: $0.concurrency.limit(cpus: cpus)) }
        self.init(graphName: graph.name, nodes: nodes, queues: queues)
    }
}

extension RunEvent.Instance {
    /// What a run's events say of an instance of the graph.
    init(_ instance: NodeInstance) {
        self.init(template: instance.template, item: instance.item,
                  matrix: instance.item == nil ? instance.matrix.map { KeyValue($0.name, $0.value) } : [])
    }
}

extension RunPlan {
    /// See `RunNode.readsInputs`.
    static func readsInputs(_ node: Node) -> Bool {
        node.commandHasExpression || node.env.contains(where: { Template.containsExpression($0.value) })
    }
}
