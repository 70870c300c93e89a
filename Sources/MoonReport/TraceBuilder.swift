import Foundation
import MoonEvents

/// Builds a `TraceModel` from a run's events, in the order they came: the
/// one reading of events into a trace, for a live run (`moon run --trace`,
/// the history), a `--json` recording and tests alike. Each attempt takes
/// the lowest lane of its queue free when it starts, so lanes never exceed
/// the queue's width while the runner keeps it.
public struct TraceBuilder {
    public private(set) var model: TraceModel?
    /// The attempt each running node is in.
    private var open: [String: Int] = [:]
    /// Per queue, which lanes an attempt holds.
    private var busy: [[Bool]] = []
    private var queueIndex: [String: Int] = [:]
    /// The graph's needs by node name, for the arrows (see `TraceModel.needs`).
    private let needs: [String: [String]]

    /// What an event changed, for a writer that follows the run.
    public enum Change: Equatable {
        /// The run began: its queues are known.
        case began
        case started(Int)
        /// The attempt at this index ended (its span is whole).
        case ended(Int)
        case restored(Int)
        /// `graph-complete`: the critical path is marked; the attempts
        /// still running (now ended as canceled) are listed.
        case finished([Int])
    }

    public init(needs: [String: [String]] = [:]) {
        self.needs = needs
    }

    /// The model of a recorded run (its events in order).
    public static func model(of events: [RunEvent], needs: [String: [String]] = [:]) -> TraceModel? {
        var builder = TraceBuilder(needs: needs)
        for event in events { _ = builder.add(event) }
        return builder.finished(at: events.last?.time)
    }

    /// Takes one event; returns what it changed in the model.
    public mutating func add(_ event: RunEvent) -> Change? {
        if case .graphStart(let graph, _, let queues) = event.kind {
            // Watch mode's next runs are pictures of their own.
            guard model == nil else { return nil }
            model = TraceModel(graph: graph, startedAt: event.time)
            model!.needs = needs
            for queue in queues { addQueue(queue.name, width: queue.concurrency) }
            return .began
        }
        guard model != nil else { return nil }
        let time = microseconds(event.time)
        switch event.kind {
        case .start(let node, let queue, let attempt, let command, _):
            if event.carried { return nil }
            if open[node] != nil { _ = attemptEnded(node, at: event.time, outcome: .retried, exitCode: nil, error: nil, usage: nil) }
            let q = queueIndex[queue] ?? addQueue(queue, width: 1)
            let slot = takeLane(q)
            model!.queues[q].lanes = max(model!.queues[q].lanes, slot + 1)
            model!.attempts.append(TraceAttempt(node: node, template: event.instance?.template, queue: q, slot: slot, attempt: attempt,
                                                start: time, waitedMilliseconds: event.waitedMilliseconds, command: command))
            open[node] = model!.attempts.count - 1
            return .started(model!.attempts.count - 1)
        case .retry(let node, _, _, let error):
            return attemptEnded(node, at: event.time, outcome: .retried, exitCode: error.exitCode, error: error.message, usage: nil).map(Change.ended)
        case .complete(let node, _, let exitCode, _):
            // The node's usage (all its attempts) goes on its last attempt.
            return attemptEnded(node, at: event.time, outcome: .succeeded, exitCode: exitCode, error: nil, usage: event.usage).map(Change.ended)
        case .error(let node, _, let error):
            let outcome: TraceAttempt.Outcome = error.kind == .canceled ? .canceled : .failed
            return attemptEnded(node, at: event.time, outcome: outcome, exitCode: error.exitCode, error: error.message, usage: event.usage)
                .map(Change.ended)
        case .skip(let node, let reason):
            switch reason {
            case .upToDate:
                model!.upToDate += 1
            case .cacheHit:
                model!.restored.append(TraceRestore(node: node, time: time, files: event.restored?.files ?? 0,
                                                    bytes: event.restored?.bytes ?? 0))
                return .restored(model!.restored.count - 1)
            default: break
            }
            return nil
        case .graphComplete(let ok, _, _, let criticalPath):
            let cut = finish(at: event.time)
            model!.ok = ok
            model!.interrupted = event.interrupted
            model!.criticalPath = criticalPath
            model!.markCriticalPath()
            return .finished(cut)
        case .graphStart, .next, .expand, .watch:
            return nil
        }
    }

    /// The model as it stands, its running attempts cut at `time` (the
    /// last event of a run that did not end).
    public func finished(at time: Date?) -> TraceModel? {
        guard var model else { return nil }
        guard model.ok == nil else { return model }
        let end = time.map { Int64(($0.timeIntervalSince(model.startedAt) * 1_000_000).rounded()) } ?? model.durationMicroseconds
        for index in open.values {
            model.attempts[index].duration = max(0, end - model.attempts[index].start)
        }
        model.durationMicroseconds = max(model.durationMicroseconds, end)
        return model
    }

    /// An attempt of `node` ended at `time`: its span is closed and its lane
    /// freed. The one place an attempt's end, and its `usage`, enter the
    /// trace. Returns the attempt's index, nil when none was running.
    public mutating func attemptEnded(_ node: String, at time: Date, outcome: TraceAttempt.Outcome, exitCode: Int32?,
                                      error: String?, usage: NodeUsage?) -> Int? {
        guard model != nil, let index = open.removeValue(forKey: node) else { return nil }
        let end = microseconds(time)
        var attempt = model!.attempts[index]
        attempt.duration = max(0, end - attempt.start)
        attempt.outcome = outcome
        attempt.exitCode = exitCode
        attempt.error = error
        attempt.usage = usage
        model!.attempts[index] = attempt
        model!.durationMicroseconds = max(model!.durationMicroseconds, end)
        busy[attempt.queue][attempt.slot] = false
        return index
    }

    private mutating func finish(at time: Date) -> [Int] {
        let end = microseconds(time)
        let cut = open.keys.sorted().compactMap { attemptEnded($0, at: time, outcome: .canceled, exitCode: nil, error: nil, usage: nil) }
        model!.durationMicroseconds = max(model!.durationMicroseconds, end)
        return cut
    }

    @discardableResult
    private mutating func addQueue(_ name: String, width: Int) -> Int {
        queueIndex[name] = model!.queues.count
        model!.queues.append(TraceQueue(name: name, width: width))
        busy.append([])
        return model!.queues.count - 1
    }

    /// The lowest free lane of queue `q`, taken.
    private mutating func takeLane(_ q: Int) -> Int {
        if let free = busy[q].firstIndex(of: false) {
            busy[q][free] = true
            return free
        }
        busy[q].append(true)
        return busy[q].count - 1
    }

    private func microseconds(_ time: Date) -> Int64 {
        guard let model else { return 0 }
        return max(0, Int64((time.timeIntervalSince(model.startedAt) * 1_000_000).rounded()))
    }
}
