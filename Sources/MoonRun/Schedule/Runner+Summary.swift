import Foundation
import MoonEvents

/// What a run leaves when it ends, besides its events: how each node
/// ended and the critical path.
extension Runner {
    public struct Summary: Sendable {
        public var ok: Bool
        public var counts: RunCounts
        public var stopReason: StopReason?
        public var criticalPath: [String]
        /// When the run started (`graph-start`) and how long it took.
        public var startedAt: Date
        public var durationMilliseconds: Int
        /// How each node of the plan ended, in plan order: what a history
        /// needs, without following the events.
        public var nodes: [NodeSummary]
        /// Whether the run ran nothing: it ended ok and unstopped, and each
        /// node was up to date, resumed or skipped by its condition (a group,
        /// barrier or expanded template only follows its needs). Nothing of
        /// such a run is worth recording: it changed nothing.
        public var ranNothing = false
    }

    /// How one node ended: the same facts as its events.
    public struct NodeSummary: Sendable {
        public enum Result: Sendable, Equatable {
            /// `failed` includes `continue-on-error` failures.
            case succeeded, failed, canceled, skipped, upToDate
        }
        public var name: String
        /// Its first attempt's start; nil if it never started.
        public var startedAt: Date?
        /// As in its `complete` or `error` event; nil if skipped.
        public var durationMilliseconds: Int?
        public var result: Result
        public var attempts: Int
        /// As in its `complete` or `error` event: what its processes used.
        public var usage: NodeUsage?
    }

    /// See `Summary.ranNothing` (`ok`: the run's).
    func ranNothing(ok: Bool) -> Bool {
        guard ok, stopReason == nil else { return false }
        return plan.nodes.indices.allSatisfy { node in
            switch state[node] {
            case .done(.skipped(.upToDate)), .done(.skipped(.resumed)), .done(.skipped(.condition)): return true
            case .done(.succeeded):
                let own = plan.nodes[node]
                return own.isGroup || own.isBarrier || own.isExpanded
            default: return false
            }
        }
    }

    func nodeSummaries() -> [NodeSummary] {
        plan.nodes.indices.filter { !plan.nodes[$0].isBarrier }.map { node in
            let result: NodeSummary.Result
            switch state[node] {
            case .done(.succeeded): result = .succeeded
            case .done(.tolerated), .done(.failed): result = .failed
            case .done(.skipped(.upToDate)), .done(.skipped(.cacheHit)), .done(.skipped(.resumed)): result = .upToDate
            case .done(.skipped): result = .skipped
            case .done(.canceled), .waiting, .ready, .checking, .asking, .running, .retrying, .settling: result = .canceled
            }
            return NodeSummary(name: plan.nodes[node].name, startedAt: firstStart[node], durationMilliseconds: durations[node],
                               result: result, attempts: attempt[node], usage: usages.isEmpty ? nil : usages[node])
        }
    }

    /// The chain of nodes that ran, each a need of the next, whose run
    /// times add up to the most: the work that bounded the run. Not the
    /// chain of last finishers: a short node that waited for a free job
    /// finishes last without having held anything up.
    func criticalPath() -> [String] {
        // Kahn's algorithm over the nodes that ran (skipped ones took no time).
        let count = plan.nodes.count
        var ran = [Bool](repeating: false, count: count)
        for node in 0..<count where firstStart[node] != nil && finishedAt[node] != nil { ran[node] = true }
        var waiting = [Int](repeating: 0, count: count)
        var dependents = [[Int]](repeating: [], count: count)
        for node in 0..<count where ran[node] {
            for need in plan.nodes[node].needs where ran[need] {
                waiting[node] += 1
                dependents[need].append(node)
            }
        }
        var ready = (0..<count).filter { ran[$0] && waiting[$0] == 0 }
        var total = [TimeInterval](repeating: 0, count: count)
        var via = [Int?](repeating: nil, count: count)
        var best: Int?
        while let node = ready.popLast() {
            var longest: TimeInterval = 0
            for need in plan.nodes[node].needs where ran[need] && (via[node] == nil || total[need] > longest) {
                longest = total[need]
                via[node] = need
            }
            // A group (an expanded template too) takes no time of its own: the path runs through it.
            let own = plan.nodes[node].isGroup ? 0 : finishedAt[node]!.timeIntervalSince(firstStart[node]!)
            total[node] = longest + own
            if best.map({ total[node] > total[$0] }) ?? true { best = node }
            for dependent in dependents[node] {
                waiting[dependent] -= 1
                if waiting[dependent] == 0 { ready.append(dependent) }
            }
        }
        var path: [String] = []
        var current = best
        while let node = current {
            if !plan.nodes[node].isGroup { path.append(plan.nodes[node].name) }
            current = via[node]
        }
        return path.reversed()
    }
}
