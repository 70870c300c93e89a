import Foundation
import MoonCommand
import MoonEvents

/// Nodes that outlive the run they started in: services (`service: true`),
/// and in watch mode the running nodes a change does not affect. A node's
/// run is its signal's subscription; handing it to another run keeps the
/// subscription and changes only where its events go (`NodeRelay`).
///
/// A service releases its dependents once its attempt has started (its
/// readiness is a `wait-for` need of theirs) and takes no job slot after
/// that. When nothing else is left, the run stops its services (SIGTERM,
/// grace), which ends them as succeeded and `stopped`, or, in watch mode
/// (`keepsServices`), hands them over still running.
extension Runner {
    /// What the runner keeps about such nodes.
    struct LiveBook {
        /// Per node, in watch mode (the only one that hands nodes over): where its signal's events go.
        var relays: [Int: NodeRelay] = [:]
        /// Services whose dependents were released when they started.
        var released = Set<Int>()
        /// Services this run stops because nothing else is left.
        var stopping = Set<Int>()
        /// Nodes taken over from the run before (their processes are its launcher's).
        var adopted: [Int: LiveNode] = [:]
        /// Nodes handed over, still running, when this run ends.
        var handedOver: [LiveNode] = []
        var keepsServices = false
    }

    /// Watch mode: at the end of the run, services are handed over
    /// (`handedOver`) instead of stopped, and `supersede` can hand nodes over.
    public var keepsServices: Bool {
        get { live.keepsServices }
        set { live.keepsServices = newValue }
    }

    /// The nodes still running that this run handed over when it ended.
    public var handedOver: [LiveNode] { live.handedOver }

    /// Takes over nodes a run before started and handed over (call before
    /// `start`): each runs on as this run's node of the same name; a
    /// service's dependents are released at once.
    public func adopt(_ nodes: [LiveNode]) {
        for liveNode in nodes {
            guard let node = plan.nodes.firstIndex(where: { $0.name == liveNode.name }) else { continue }
            liveNode.relay.attach(to: self, node: node)
            live.relays[node] = liveNode.relay
            live.adopted[node] = liveNode
            takeOver(node, liveNode)
            if liveNode.isService {
                live.released.insert(node)
                for dependent in dependents[node] { remainingNeeds[dependent] -= 1 }
            } else {
                holdSlot(node)
            }
        }
    }

    /// Announces the adopted nodes as running in this run (`start` marked `carried`).
    func announceAdopted() {
        for node in live.adopted.keys.sorted() {
            let spec = plan.nodes[node]
            var event = RunEvent(time: scheduler.now, kind: .start(node: spec.name, queue: plan.queues[spec.queue].name,
                                                                    attempt: max(1, attempt[node]), command: command(of: node)),
                                 instance: spec.instance)
            event.carried = true
            emit(event)
        }
    }

    /// Watch mode: a newer change replaces this run. Running nodes for
    /// which `keeping` holds carry on (handed over); the rest stop as
    /// superseded.
    public func supersede(keeping: (String) -> Bool) {
        guard !finished else { return }
        let kept = runningNodes.filter { keeping(plan.nodes[$0].name) }
        let waitedOn = kept.filter { !handOver($0) }
        stop(.superseded)
        // Their dependents were waiting on them: this run ends them as cancelled.
        for node in waitedOn { releaseDependents(of: node) }
        // With every running node handed over, no node's end is left to end the run.
        finishIfDone()
    }

    /// A service's attempt started: its dependents may start, and it no longer takes a job.
    func serviceStarted(_ node: Int) {
        guard plan.nodes[node].isService, !live.released.contains(node) else { return }
        switch state[node] {
        case .running, .retrying: break
        default: return
        }
        live.released.insert(node)
        releaseDependents(of: node)
        freeSlot(node)
        pump()
    }

    /// Whether the node's dependents were released already (a service): its end releases nothing more.
    func releasedEarly(_ node: Int) -> Bool {
        live.released.remove(node) != nil
    }

    /// Called when the run could be over: once only services are left, stops
    /// them (or in watch mode hands them over).
    /// (After a stop of the run, its services are cancelled with the rest.)
    func servicesWhenIdle() {
        guard !live.released.isEmpty, !finished, stopReason == nil, offLoopWork == 0 else { return }
        let services = live.released.subtracting(live.stopping).filter { subscriptions[$0] != nil }
        guard !services.isEmpty, doneCount + live.released.count + live.handedOver.count == plan.nodes.count else { return }
        for node in services.sorted() {
            if live.keepsServices {
                handOver(node)
            } else {
                live.stopping.insert(node)
                cancel(node)
            }
        }
    }

    /// How a node that moon cancelled ends: a service stopped at the end
    /// succeeds (`stopped`); anything else is cancelled.
    func cancelledResult(_ node: Int, message: String) -> NodeResult {
        live.stopping.contains(node) ? .success(exitCode: nil, outputs: []) : .failure(NodeError(.canceled, message))
    }

    /// Whether the node's `complete` says moon stopped it.
    func stoppedByRun(_ node: Int) -> Bool {
        live.stopping.contains(node)
    }

    /// Completes once the node left no process (an adopted node's are its first run's launcher's).
    func settledSignal(_ node: Int) -> Signal<Never> {
        live.adopted[node]?.settled ?? launcher.settled(node: node)
    }

    /// Kills at once the processes of adopted nodes (a second interrupt).
    func killAdoptedNow() {
        for liveNode in live.adopted.values { liveNode.launcher.killNow() }
    }

    /// Nodes handed over count as ended for this run.
    var handedOverCount: Int { live.handedOver.count }

    private var runningNodes: [Int] { subscriptions.indices.filter { subscriptions[$0] != nil } }

    private func takeSubscription(_ node: Int) -> Disposable? {
        defer { subscriptions[node] = nil }
        return subscriptions[node]
    }

    /// The adopted node runs here as it ran in its first run.
    private func takeOver(_ node: Int, _ liveNode: LiveNode) {
        state[node] = .running
        subscriptions[node] = liveNode.subscription
        attempt[node] = max(1, liveNode.relay.attempt)
        firstStart[node] = liveNode.firstStart
        values[node] = liveNode.values
        announced[node] = true
    }

    private func holdSlot(_ node: Int) {
        inFlight[plan.nodes[node].queue] += 1
        totalInFlight += 1
        budget?.take(need(node))
    }

    private func freeSlot(_ node: Int) {
        inFlight[plan.nodes[node].queue] -= 1
        totalInFlight -= 1
        if budget != nil { giveBack(node) }
    }

    /// Detaches a running node: its subscription and processes go on, its
    /// events go to whoever takes it next. Returns whether it was a
    /// service whose dependents were released already.
    @discardableResult
    private func handOver(_ node: Int) -> Bool {
        guard let relay = live.relays[node], let subscription = takeSubscription(node) else { return false }
        let released = live.released.remove(node) != nil
        if !released { freeSlot(node) }
        relay.detach()
        // A retry waiting for this run's whole budget goes ahead: the run no longer counts it.
        forgetMemoryRetry(node)
        let spec = plan.nodes[node]
        let owner = live.adopted[node]
        live.handedOver.append(LiveNode(name: spec.name, isService: spec.isService, relay: relay, subscription: subscription,
                                        launcher: owner?.launcher ?? launcher, launcherIndex: owner?.launcherIndex ?? node,
                                        firstStart: firstStart[node], values: values[node]))
        return released
    }
}

/// A node running outside any run, between a run that handed it over and
/// the next that adopts it (watch mode).
public final class LiveNode {
    public let name: String
    public let isService: Bool
    let relay: NodeRelay
    let subscription: Disposable
    let launcher: NodeLauncher
    let launcherIndex: Int
    public let firstStart: Date?
    let values: [String]

    init(name: String, isService: Bool, relay: NodeRelay, subscription: Disposable, launcher: NodeLauncher, launcherIndex: Int,
         firstStart: Date?, values: [String]) {
        self.name = name
        self.isService = isService
        self.relay = relay
        self.subscription = subscription
        self.launcher = launcher
        self.launcherIndex = launcherIndex
        self.firstStart = firstStart
        self.values = values
    }

    /// Completes once its processes are gone.
    public var settled: Signal<Never> { launcher.settled(node: launcherIndex) }

    /// Where its events go while no run holds it (its output, its end).
    public var onEvent: ((Event<NodeOutput>) -> Void)? {
        get { relay.idle }
        set { relay.idle = newValue }
    }

    /// Stops it: SIGTERM, SIGKILL after the grace period (`settled` says when it is gone).
    public func stop() { subscription.dispose() }

    /// Kills its processes at once.
    public func killNow() { launcher.killNow() }
}

/// Routes a running node's signal to the run that holds it, or while none
/// does to `idle`. It also numbers the node's attempts, which go on across runs.
final class NodeRelay {
    private weak var runner: Runner?
    private var node: Int
    private(set) var attempt = 0
    var idle: ((Event<NodeOutput>) -> Void)?

    init(runner: Runner, node: Int) {
        self.runner = runner
        self.node = node
    }

    func attach(to runner: Runner, node: Int) {
        self.runner = runner
        self.node = node
    }

    func detach() { runner = nil }

    func attemptStarts() -> Int {
        if let runner { attempt = runner.attemptStarts(node) } else { attempt += 1 }
        return attempt
    }

    func retrying(failed: Int, delay: Duration, error: NodeError) {
        runner?.retrying(node, failed: failed, delay: delay, error: error)
    }

    /// Completes when the run the node is in lets its next attempt start
    /// (`Runner.whenAdmitted`); at once between runs.
    func admitted() -> Signal<Never> {
        Signal { [weak self] observer, _ in
            guard let self, let runner = self.runner else { return observer.sendCompleted() }
            runner.whenAdmitted(self.node) { observer.sendCompleted() }
        }
    }

    func receive(_ event: Event<NodeOutput>) {
        if let runner { runner.nodeEvent(event, from: node) } else { idle?(event) }
    }
}
