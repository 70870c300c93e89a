import Foundation
import MoonCommand
import MoonEvents
import MoonGraph

/// `moon simulate`: the real `Runner` on virtual time, with a launcher
/// whose nodes take their recorded durations (`SimulatedLauncher`), so the
/// prediction follows the scheduler's own rules (critical path first, queue
/// widths, `-j`, memory admission). Nothing starts and nothing is written.
///
/// Assumptions: every node runs (as with `--force`) and succeeds on its
/// first attempt, in its recorded time; starting a process costs nothing.
public struct Simulation {
    /// A node's predicted time: recorded, or guessed (`DurationSource`).
    public struct Estimate: Sendable, Equatable {
        public var seconds: TimeInterval
        public var source: DurationSource
    }

    public enum DurationSource: String, Sendable {
        /// Its own last successful run.
        case recorded
        /// The median of its fan-out's recorded instances.
        case siblings
        /// Never seen: `Simulation.defaultDuration`.
        case `default`
    }

    /// What a node never seen, with no recorded sibling, is taken to take.
    public static let defaultDuration: TimeInterval = 1

    /// One node's wait: for its needs, or once ready for a slot or memory.
    public struct Wait: Sendable, Equatable {
        public var node: String
        public var milliseconds: Int
        /// "need NAME", or what was full once it was ready: "memory", "a slot of queue NAME",
        /// "a slot of -j" (joined by "and"), or "nodes of higher priority".
        public var reason: String
    }

    public struct Queue: Sendable, Equatable {
        public var name: String
        /// Slots the queue could use at once (its width, within `-j`).
        public var capacity: Int
        /// Busy slot time over capacity × wall time, 0…1.
        public var utilisation: Double
    }

    public struct Result: Sendable {
        public var jobs: Int?
        public var memory: Int64?
        public var wallMilliseconds: Int
        public var criticalPath: [String]
        public var queues: [Queue]
        /// The longest waits, longest first.
        public var waits: [Wait]
        public var nodes: Int
    }

    public let plan: RunPlan
    /// By node of the plan.
    public let estimates: [Estimate]
    /// A dynamic fan-out's items, by template name (from its recorded instances).
    public let fanOutItems: [String: [String]]
    let instanceEstimate: (String) -> TimeInterval

    /// `durations`: milliseconds by node name, as recorded (`StateStore.lastDurations`).
    public init(plan: RunPlan, durations: [String: Int]) {
        self.plan = plan
        // Each fan-out's recorded instances, by template: NAME[ITEM].
        var siblings: [String: [(item: String, ms: Int)]] = [:]
        for (name, ms) in durations {
            guard name.hasSuffix("]"), let open = name.firstIndex(of: "[") else { continue }
            let template = String(name[..<open])
            siblings[template, default: []].append((String(name[name.index(after: open)..<name.index(before: name.endIndex)]), ms))
        }
        func median(_ values: [Int]) -> Int? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[sorted.count / 2]
        }
        let medians = siblings.mapValues { median($0.map(\.ms)) }
        func estimate(_ name: String, template: String?) -> Estimate {
            if let ms = durations[name] { return Estimate(seconds: Double(ms) / 1000, source: .recorded) }
            if let template, let ms = medians[template] ?? nil { return Estimate(seconds: Double(ms) / 1000, source: .siblings) }
            return Estimate(seconds: Self.defaultDuration, source: .default)
        }
        estimates = plan.nodes.map { estimate($0.name, template: $0.instance?.template) }
        fanOutItems = siblings.mapValues { $0.map(\.item).sorted() }
        instanceEstimate = { name in
            let template = name.firstIndex(of: "[").map { String(name[..<$0]) }
            return estimate(name, template: template).seconds
        }
    }

    /// Runs the plan with `options` (its `jobs` and memory budget) on virtual time.
    public func run(options: RunOptions) -> Result {
        let scheduler = TestScheduler()
        let start = scheduler.now
        // A need of a dynamic fan-out sends the items the fan-out had.
        var outputs = Array(repeating: [KeyValue](), count: plan.nodes.count)
        for node in plan.nodes {
            guard let fanOut = node.fanOut else { continue }
            let items = fanOutItems[node.name] ?? []
            let list = "[" + items.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
                .joined(separator: ",") + "]"
            outputs[fanOut.need].append(KeyValue(fanOut.key, list))
        }
        let launcher = SimulatedLauncher(scheduler: scheduler, names: plan.nodes.map(\.name), durations: estimates.map(\.seconds),
                                         isService: plan.nodes.map(\.isService), outputs: outputs, durationOf: instanceEstimate)
        var options = options
        options.timeout = nil
        var events: [RunEvent] = []
        let runner = Runner(plan: plan, options: options, launcher: launcher, scheduler: scheduler) { events.append($0) }
        var summary: Runner.Summary?
        runner.onFinish = { summary = $0 }
        runner.start()
        scheduler.run()
        let wall = summary?.durationMilliseconds ?? Int((scheduler.now.timeIntervalSince(start) * 1000).rounded())
        return Result(jobs: options.jobs, memory: runner.budget.flatMap { $0.memory == .max ? nil : $0.memory },
                      wallMilliseconds: wall, criticalPath: summary?.criticalPath ?? [],
                      queues: queues(runner.plan, launcher.spans, wall: wall, jobs: options.jobs),
                      waits: waits(runner.plan, launcher.spans, events: events, start: start, options: options,
                                   budget: runner.budget),
                      nodes: runner.plan.nodes.filter { !$0.isGroup && !$0.isBarrier }.count)
    }

    private func queues(_ plan: RunPlan, _ spans: [Int: (start: TimeInterval, end: TimeInterval)], wall: Int, jobs: Int?) -> [Queue] {
        var busy = Array(repeating: 0.0, count: plan.queues.count)
        // A node wider than its queue (or -j) runs alone: it holds the whole queue, no more.
        for (node, span) in spans {
            let q = plan.nodes[node].queue
            let held = min(plan.nodes[node].slots, plan.queues[q].concurrency, jobs ?? .max)
            busy[q] += (span.end - span.start) * Double(held)
        }
        return plan.queues.indices.compactMap { q in
            let capacity = min(plan.queues[q].concurrency, jobs ?? .max)
            // A queue no selected node uses says nothing.
            guard plan.nodes.contains(where: { $0.queue == q && !$0.isGroup }) else { return nil }
            let seconds = Double(wall) / 1000 * Double(capacity)
            return Queue(name: plan.queues[q].name, capacity: capacity, utilisation: seconds > 0 ? min(1, busy[q] / seconds) : 0)
        }
    }

    /// Each node's waits: for the need that ended last (from the end of the
    /// first of its needs to the end of the last, when it has several), and
    /// once ready, for what held it, read off what ran when it became ready.
    private func waits(_ plan: RunPlan, _ spans: [Int: (start: TimeInterval, end: TimeInterval)], events: [RunEvent], start: Date,
                       options: RunOptions, budget: ResourceBudget?) -> [Wait] {
        // When each node ended (groups and skips included), in virtual seconds.
        var ended: [String: TimeInterval] = [:]
        for event in events {
            switch event.kind {
            case .complete(let node, _, _, _), .error(let node, _, _), .skip(let node, _):
                ended[node] = event.time.timeIntervalSince(start)
            default: break
            }
        }
        var result: [Wait] = []
        for (node, span) in spans {
            let spec = plan.nodes[node]
            var readyAt: TimeInterval = 0
            var firstEnd = TimeInterval.infinity
            var last: String?
            for need in spec.needs {
                guard let end = ended[plan.nodes[need].name] else { continue }
                firstEnd = min(firstEnd, end)
                if end >= readyAt {
                    readyAt = end
                    last = plan.nodes[need].name
                }
            }
            // Held back by a straggler: from its first need's end to its last's.
            if let last, spec.needs.count > 1, readyAt - firstEnd > 0.0005 {
                result.append(Wait(node: spec.name, milliseconds: Int(((readyAt - firstEnd) * 1000).rounded()), reason: "need \(last)"))
            }
            let held = span.start - readyAt
            guard held > 0.0005 else { continue }
            // What ran just after it became ready.
            let running = spans.filter { $0.key != node && $0.value.start <= readyAt && $0.value.end > readyAt }.map(\.key)
            let memoryInUse = running.reduce(Int64(0)) { $0 + (plan.nodes[$1].memory ?? 0) }
            var reasons: [String] = []
            if let budget, budget.memory != .max, let memory = spec.memory, memoryInUse + memory > budget.memory {
                reasons.append("memory")
            }
            if running.filter({ plan.nodes[$0].queue == spec.queue }).reduce(0, { $0 + plan.nodes[$1].slots }) + spec.slots
                > plan.queues[spec.queue].concurrency {
                reasons.append("a slot of queue \(plan.queues[spec.queue].name)")
            }
            if let jobs = options.jobs, running.reduce(0, { $0 + plan.nodes[$1].slots }) + spec.slots > jobs {
                reasons.append("a slot of -j")
            }
            // Nothing was full: nodes of higher priority took what freed at that instant.
            let reason = reasons.isEmpty ? "nodes of higher priority" : reasons.joined(separator: " and ")
            result.append(Wait(node: spec.name, milliseconds: Int((held * 1000).rounded()), reason: reason))
        }
        return result.sorted { $0.milliseconds != $1.milliseconds ? $0.milliseconds > $1.milliseconds : $0.node < $1.node }
    }
}
