import Foundation
import MoonCommand
import MoonGraph
import MoonEvents
import MoonSystem

/// Runs a plan: starts each node when its needs have ended as its `if`
/// requires, on its queue, highest critical-path priority first, within the
/// queue widths and `-j`, and emits every `RunEvent`. A node runs as a
/// signal of the reactive core (`NodeSignal`: its attempts, the `timeout`
/// and `retry` operators): the runner decides when to subscribe to it,
/// cancels it by disposing the subscription, and turns its events into
/// `RunEvent`s. Like ninja's Plan and Builder, it does no I/O itself: it
/// reaches processes through a `NodeLauncher` and time through a scheduler.
///
/// Threading: every method, and every callback into the runner, runs on
/// `scheduler`, a serial context (a queue scheduler in moon, a TestScheduler
/// in tests). Events are emitted on it, so reporters see them serially.
///
/// Here: a node's states, the scheduling between them and the run's end; a
/// node's run (subscribe, events, end) is `Runner+Node`; the up-to-date
/// check, services and hand-over, fan-out and the summary are the other
/// `Runner+…` extensions.
public final class Runner {
    /// How a node ended, as its dependents and the counts see it.
    enum Outcome: Equatable {
        case succeeded
        /// Failed with `continue-on-error`: dependents treat it as succeeded.
        case tolerated
        case failed
        case canceled
        case skipped(SkipReason)

        /// An up-to-date or restored node counts as succeeded for its dependents.
        var isSuccess: Bool {
            self == .succeeded || self == .tolerated || self == .skipped(.upToDate) || self == .skipped(.cacheHit)
                || self == .skipped(.resumed)
        }
    }

    enum NodeState {
        case waiting
        case ready
        /// Its up-to-date check runs off the loop (it was slow; see `CheckInterruption`).
        case checking
        /// Waits for the terminal, or for the answer to its `confirm:` question (Runner+Terminal).
        case asking
        /// Its signal is subscribed and an attempt runs.
        case running
        /// Between a failed attempt and the next; still holds its queue slot.
        case retrying
        /// Its signal ended or was cancelled; it holds its slot until its
        /// processes are gone.
        case settling
        case done(Outcome)
    }

    /// Why the run is stopping, if it is.
    public enum StopReason: Sendable, Equatable {
        /// A node failed and `-k` was not given (fail-fast).
        case failure
        case interrupt(signal: Int32)
        case timeout
        /// Watch mode: inputs changed, and a new run replaces this one.
        case superseded
    }

    /// How a node's signal ended.
    enum NodeResult {
        case success(exitCode: Int32?, outputs: [KeyValue])
        case failure(NodeError)
    }

    /// The plan, and after it the nodes made during the run (the instances
    /// of each `for-each` over a need's output, see Runner+FanOut).
    var plan: RunPlan
    /// How many nodes the up-to-date check knows: the plan's, and the
    /// instances of dynamic fan-outs when it took them (Runner+FanOut).
    var planned: Int
    let options: RunOptions
    let launcher: NodeLauncher
    let scheduler: DateScheduler
    let emit: (RunEvent) -> Void

    var state: [NodeState]
    var remainingNeeds: [Int]
    var dependents: [[Int]]
    var ready: [ReadyQueue]
    var inFlight: [Int]
    var totalInFlight = 0
    /// Nodes `pump` has started so far (the sweep watches it).
    var starts = 0
    var attempt: [Int]
    var firstStart: [Date?]
    var finishedAt: [Date?]
    /// `duration_ms` of each node's terminal event (nil: skipped or not ended).
    var durations: [Int?]
    /// What each node that ran processes used (its `usage`); a dictionary,
    /// so a run where nothing runs spends nothing on it.
    var usages: [Int: NodeUsage] = [:]
    /// Per node: the subscription to its signal while it is subscribed.
    var subscriptions: [Disposable?]
    /// Per node, of its current attempt: whether its `start` was emitted,
    /// its exit code and its outputs (sent just before it completes).
    var announced: [Bool]
    var exitCodes: [Int32?]
    var attemptOutputs: [[KeyValue]]
    var values: [[String]]
    /// The outputs of each node that succeeded, for its dependents' expressions.
    var outputs: [[String: String]]
    private(set) var doneCount = 0
    private var counts = RunCounts()
    /// Failures without `continue-on-error`: any makes the run fail.
    private var hardFailures = 0
    /// Nodes that ended canceled or were skipped as canceled: what a stop
    /// actually stopped.
    private var canceledNodes = 0
    private(set) var runStart = Date()
    private var runTimer: Disposable?
    private(set) var finished = false
    /// Services, and nodes handed between runs in watch mode (Runner+Live).
    var live = LiveBook()
    public private(set) var stopReason: StopReason?
    /// Called once, after `graph-complete`.
    public var onFinish: ((Summary) -> Void)?
    /// Asked before a node starts whether it is up to date (nil: always run).
    public var upToDate: UpToDateChecking?
    /// Hides the run's secrets in every node's output, values, outputs,
    /// errors and command before anything sees them (nil: no secrets).
    public var secretMask: SecretMask?
    /// Per node and stream (`2 * node + 1` for stderr): the end of a long
    /// line's part that may start a secret, put before its next part.
    var maskCarry: [Int: [UInt8]] = [:]
    /// Stops a slow up-to-date check (the source hasher polls it), when it
    /// overruns its time on the loop or the run stops.
    public let checkInterruption = CheckInterruption()
    /// Where slow checks and cache restores go (several at once); work given
    /// to `checkWorker` that has not reported back yet (the run finishes
    /// only after it).
    lazy var checkWorker = WorkerPool(name: "moon.check", width: Self.checkWidth(waitsOnNetwork: upToDate?.waitsOnNetwork ?? false))

    /// Threads for the checks and restores off the loop: one per CPU (at
    /// least 2, at most `WorkerPool.defaultWidth`) when they hash and write
    /// local files, as more only spin on the state's lock and the kernel's
    /// lock of the directory they write in; `defaultWidth` when a remote
    /// cache makes them wait on the network.
    static func checkWidth(waitsOnNetwork: Bool, cpus: Int = LinuxCalls.processorCount()) -> Int {
        waitsOnNetwork ? WorkerPool.defaultWidth : min(WorkerPool.defaultWidth, max(2, cpus))
    }
    var offLoopWork = 0
    /// Admission by memory and slots (Runner+Admission); nil unless a node
    /// declares or learned resources, and then made when the run starts.
    var budget: ResourceBudget?
    var usesResources = false
    /// Whether `ResourceOptions.learn` was called (Runner+Admission).
    var learnedRead = false
    /// The best ready node while it does not fit; what ends is kept for it.
    var waitingForResources: Int?
    /// Nodes larger than the memory budget, warned about once.
    var warnedLarge: Set<Int> = []
    /// The kernel's count of OOM kills when each node that needs memory started.
    var oomKillsAtStart: [Int: Int] = [:]
    /// Nodes killed for memory whose retry waits for, or holds, the whole budget.
    var memoryRetries = MemoryRetries()
    /// The person at the terminal: `confirm:` questions and interactive
    /// nodes (nil: no terminal, so a question fails its node unless `--yes`).
    public var terminal: RunTerminal?
    /// Who has the terminal, and who waits for it (Runner+Terminal).
    var terminalBook = TerminalBook()

    public init(plan: RunPlan, options: RunOptions, launcher: NodeLauncher, scheduler: DateScheduler,
                emit: @escaping (RunEvent) -> Void) {
        self.plan = plan
        self.options = options
        self.launcher = launcher
        self.scheduler = scheduler
        self.emit = emit
        let n = plan.nodes.count
        planned = n
        state = Array(repeating: .waiting, count: n)
        remainingNeeds = plan.nodes.map { $0.needs.count }
        dependents = Array(repeating: [], count: n)
        for (index, node) in plan.nodes.enumerated() {
            for need in node.needs { dependents[need].append(index) }
            if node.memory != nil || node.slots != 1 { usesResources = true }
        }
        ready = plan.queues.map { _ in ReadyQueue() }
        inFlight = Array(repeating: 0, count: plan.queues.count)
        attempt = Array(repeating: 0, count: n)
        firstStart = Array(repeating: nil, count: n)
        finishedAt = Array(repeating: nil, count: n)
        durations = Array(repeating: nil, count: n)
        values = Array(repeating: [], count: n)
        outputs = Array(repeating: [:], count: n)
        subscriptions = Array(repeating: nil, count: n)
        announced = Array(repeating: false, count: n)
        exitCodes = Array(repeating: nil, count: n)
        attemptOutputs = Array(repeating: [], count: n)
        if !options.resources.learned.isEmpty { learnResources(options.resources.learned) }
    }

    // MARK: - Control (call on the scheduler)

    /// Announces the plan and starts every node without needs.
    public func start() {
        runStart = scheduler.now
        if usesResources { makeBudget() }
        emit(RunEvent(time: runStart, kind: .graphStart(graph: plan.graphName, nodes: plan.nodes.compactMap { $0.isBarrier ? nil : $0.name },
                                                                 queues: plan.queues)))
        announceAdopted()
        if let timeout = options.timeout {
            runTimer = scheduler.schedule(after: timeout) { [weak self] in
                self?.stop(.timeout)
            }
        }
        sweep(from: 0)
    }

    /// Decides the nodes without needs from `first` on (only those still
    /// waiting: one skipped as up to date releases its dependents at once).
    /// Once one has started (an up-to-date node after it let `pump` run),
    /// the rest waits for the loop's next turn, so that its process spawns
    /// now rather than after every other check: an edit's first compile
    /// starts while the unchanged objects are still being checked. `pump`
    /// chose it as it did before; between turns a node may end, so a
    /// dependent may take a slot before the rest are decided, and after a
    /// fail-fast stop the undecided ones are skipped as canceled.
    private func sweep(from first: Int) {
        let startsBefore = starts
        var index = first
        while index < plan.nodes.count {
            if remainingNeeds[index] == 0, case .waiting = state[index] { decide(index) }
            index += 1
            if starts != startsBefore, index < plan.nodes.count {
                let next = index
                // After the loop's posted work (the spawn) and its next poll.
                scheduler.schedule(after: .zero) { [weak self] in self?.sweep(from: next) }
                return
            }
        }
        pump()
        finishIfDone()
    }

    /// Stops the run: cancels running nodes (SIGTERM, then SIGKILL after
    /// the grace period), and skips everything not yet started. A second
    /// interrupt kills what is still running at once.
    public func stop(_ reason: StopReason) {
        guard !finished else { return }
        if case .interrupt = stopReason, case .interrupt = reason {
            launcher.killNow()
            killAdoptedNow()
            return
        }
        if stopReason == nil || stopReason == .failure { stopReason = reason }
        checkInterruption.cancel()
        cancelAllWork(includingCleanup: reason != .failure)
    }

    // MARK: - Scheduling

    /// Starts ready nodes while their queue and `-j` have room, best priority first.
    func pump() {
        let jobs = options.jobs ?? Int.max
        var starting: [Int] = []
        if !learnedRead, ready.contains(where: { !$0.isEmpty }), jobs > 1 { learnBeforeTheFirstStart() }
        while totalInFlight < jobs {
            var best: Int?
            for q in ready.indices where inFlight[q] < plan.queues[q].concurrency {
                guard let head = ready[q].first else { continue }
                if let b = best {
                    let (pb, ph) = (plan.nodes[b].priority, plan.nodes[head].priority)
                    if ph > pb || (ph == pb && head < b) { best = head }
                } else {
                    best = head
                }
            }
            guard let best else { break }
            // With resources, the best node may not fit: one behind it may start instead, or none.
            guard let node = budget == nil ? best : admit(best) else { break }
            let q = plan.nodes[node].queue
            if node == best { _ = ready[q].pop() } else { ready[q].remove(node) }
            inFlight[q] += 1
            totalInFlight += 1
            starting.append(node)
        }
        guard !starting.isEmpty else { return }
        starts += starting.count
        // The up-to-date check forgets them first, in one write for the lot.
        upToDate?.starting(nodes: starting.filter { $0 < planned })
        for node in starting {
            // A spawn that failed at once may have stopped the run meanwhile.
            if let stop = stopReason, stop != .failure || plan.nodes[node].condition == .success {
                inFlight[plan.nodes[node].queue] -= 1
                totalInFlight -= 1
                budget?.give(need(node))
                skip(node, .canceled)
                continue
            }
            startNode(node)
        }
    }

    /// A node ended: free its slot, count it, release its dependents.
    func nodeDone(_ node: Int, _ outcome: Outcome) {
        let wasInFlight: Bool
        switch state[node] {
        case .running, .retrying, .settling: wasInFlight = true
        default: wasInFlight = false
        }
        // A service released its dependents and its slot when it started.
        let releasedEarly = releasedEarly(node)
        state[node] = .done(outcome)
        finishedAt[node] = scheduler.now
        doneCount += 1
        if wasInFlight && !releasedEarly {
            inFlight[plan.nodes[node].queue] -= 1
            totalInFlight -= 1
            if budget != nil { giveBack(node) }
        }
        if !memoryRetries.isIdle {
            memoryRetries.remove(node)
            grantWholeBudget()
        }
        if plan.nodes[node].isBarrier { return barrierDone(node) }
        // An expanded template is counted as its instances, not as one more node.
        let counted = !plan.nodes[node].isExpanded
        switch outcome {
        case .succeeded: if counted { counts.succeeded += 1 }
        case .tolerated: if counted { counts.failed += 1 }
        case .failed:
            if counted { counts.failed += 1 }
            hardFailures += 1
        case .canceled:
            if counted { counts.canceled += 1 }
            canceledNodes += 1
        case .skipped(let reason):
            if counted { counts.skipped += 1 }
            if reason == .canceled { canceledNodes += 1 }
        }
        if outcome == .failed, !options.keepGoing, stopReason == nil {
            stopReason = .failure
            cancelAllWork(includingCleanup: false)
        }
        if !releasedEarly { releaseDependents(of: node) }
        releaseTerminal(node)
        pump()
        finishIfDone()
    }

    /// The node ended (or, a service, started): its dependents have one need less.
    func releaseDependents(of node: Int) {
        for dependent in dependents[node] {
            remainingNeeds[dependent] -= 1
            if remainingNeeds[dependent] == 0, case .waiting = state[dependent] {
                decide(dependent)
            }
        }
    }

    /// All needs of `node` have ended: make it ready, or skip it.
    func decide(_ node: Int) {
        let spec = plan.nodes[node]
        // After an interrupt or the run's timeout nothing new starts.
        if let stop = stopReason, stop != .failure {
            skip(node, .canceled)
            return
        }
        var allSucceeded = true
        var anyFailed = false
        var anyCanceled = false
        var anyDeclined = false
        for need in spec.needs {
            guard case .done(let outcome) = state[need] else { continue }
            switch outcome {
            case .succeeded, .tolerated: break
            case .failed, .skipped(.upstreamFailed): anyFailed = true
            case .canceled, .skipped(.canceled): anyCanceled = true
            case .skipped(.declined): anyDeclined = true
            case .skipped: break
            }
            if !outcome.isSuccess { allSucceeded = false }
        }
        let runs: Bool
        switch spec.condition {
        case .success: runs = allSucceeded
        case .failure: runs = anyFailed || anyCanceled
        case .always: runs = true
        }
        guard runs else {
            skip(node, anyFailed ? .upstreamFailed : anyCanceled ? .canceled : anyDeclined ? .declined : .condition)
            return
        }
        // After a failure (fail-fast) only clean-up nodes (`if: failure|always`) still run.
        if stopReason == .failure, spec.condition == .success {
            skip(node, .canceled)
            return
        }
        if spec.isGroup { return needsAllUpToDate(node) ? skip(node, .upToDate) : toRun(node) }
        if let fanOut = spec.fanOut { return expand(node, fanOut) }
        // A service always starts: up to date or not, nothing else runs it.
        if node < planned, !spec.isService, let checker = upToDate, checker.checks(node: node), !check(node, with: checker) { return }
        toRun(node)
    }

    func skip(_ node: Int, _ reason: SkipReason, restored: CacheRestore? = nil) {
        if plan.nodes[node].isBarrier { return nodeDone(node, .skipped(reason)) }
        emit(RunEvent(time: scheduler.now, kind: .skip(node: plan.nodes[node].name, reason: reason), instance: plan.nodes[node].instance,
                      restored: restored))
        nodeDone(node, .skipped(reason))
    }

    /// Cancels running attempts and pending retries, and skips ready nodes
    /// (all of them, or all but clean-up nodes after a failure).
    private func cancelAllWork(includingCleanup: Bool) {
        // (The nodes are listed first: a cancelled node may end at once and
        // let a clean-up node start, which this stop must not cancel.)
        for node in subscriptions.indices.filter({ subscriptions[$0] != nil }) {
            cancel(node)
        }
        for q in ready.indices {
            for node in ready[q].removeAll().sorted() {
                let cleanup = plan.nodes[node].condition != .success
                if cleanup && !includingCleanup {
                    ready[q].push(node, priority: plan.nodes[node].priority)
                } else {
                    skip(node, .canceled)
                }
            }
        }
        if terminalBook.holder != nil || !terminalBook.waiting.isEmpty { withdrawTerminalWaits(includingCleanup: includingCleanup) }
    }

    func finishIfDone() {
        servicesWhenIdle()
        guard !finished, doneCount + handedOverCount == plan.nodes.count, offLoopWork == 0 else { return }
        finished = true
        runTimer?.dispose()
        // The run's --timeout expired when no node was left to stop (say,
        // during a last check off the loop): nothing was stopped, so the
        // run is not a timed-out one. The events, the summary and the exit
        // code all say so.
        if stopReason == .timeout && canceledNodes == 0 { stopReason = nil }
        let now = scheduler.now
        // A declined question fails the run, as go-task's and just's do.
        let ok = hardFailures == 0 && stopReason == nil && terminalBook.declined == 0
        let path = criticalPath()
        let duration = milliseconds(from: runStart, to: now)
        var interrupted: String?
        if case .interrupt(let signal)? = stopReason { interrupted = signalName(signal) }
        var complete = RunEvent(time: now, kind: .graphComplete(ok: ok, durationMilliseconds: duration,
                                                                counts: counts, criticalPath: path), interrupted: interrupted)
        complete.running = handedOver.map(\.name)
        if stopReason == .timeout { complete.timedOut = options.timeout.map { DurationText.format($0) } ?? "?" }
        emit(complete)
        guard let onFinish else { return }
        onFinish(Summary(ok: ok, counts: counts, stopReason: stopReason, criticalPath: path, startedAt: runStart,
                         durationMilliseconds: duration, nodes: nodeSummaries(), ranNothing: ranNothing(ok: ok)))
    }

    func milliseconds(from start: Date, to end: Date) -> Int {
        max(0, Int((end.timeIntervalSince(start) * 1000).rounded()))
    }
}
