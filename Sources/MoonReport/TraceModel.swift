import Foundation
import MoonEvents

/// The picture of one run that `moon trace` draws: every attempt of every
/// node as a span on a lane of its queue, the cache's restores, the critical
/// path and the needs between them. Built from the run's events
/// (`TraceBuilder`), so a live run, a `--json` recording and the history
/// give the same picture. Times are microseconds since the run began.
public struct TraceModel: Sendable, Equatable {
    public var graph: String
    /// When the run began (its `graph-start`).
    public var startedAt: Date
    /// To `graph-complete`, or to the last event of a run that did not end.
    public var durationMicroseconds: Int64 = 0
    public var queues: [TraceQueue] = []
    /// In start order.
    public var attempts: [TraceAttempt] = []
    /// Nodes restored from the output cache: they ran nowhere.
    public var restored: [TraceRestore] = []
    /// Nodes skipped as up to date: counted, not drawn.
    public var upToDate = 0
    public var criticalPath: [String] = []
    /// Each node's needs by name, as its graph says (empty: not known, no
    /// arrows). A fan-out's instances take their template's needs.
    public var needs: [String: [String]] = [:]
    /// How the run ended: nil when its `graph-complete` never came.
    public var ok: Bool?
    /// The signal that stopped the run, if one did.
    public var interrupted: String?

    public init(graph: String, startedAt: Date) {
        self.graph = graph
        self.startedAt = startedAt
    }

    /// The attempts of `criticalPath`'s nodes are marked critical.
    mutating func markCriticalPath() {
        let critical = Set(criticalPath)
        for index in attempts.indices { attempts[index].critical = critical.contains(attempts[index].node) }
    }

    /// The arrows for needs (see `TraceFlows`), as pairs of attempt indices.
    public func flows() -> [(from: Int, to: Int)] {
        guard !needs.isEmpty else { return [] }
        var flows = TraceFlows()
        var out: [(from: Int, to: Int)] = []
        for index in attempts.indices {
            for from in flows.started(index, in: self) { out.append((from, index)) }
        }
        return out
    }
}

/// The arrows for needs, found as attempts start: from each need's last
/// attempt to the first attempt of the node that needs it; a need on a
/// fan-out points from each of its instances (at most `perNode` arrows
/// into one node, so a link step over thousands of objects stays readable).
struct TraceFlows {
    private var last: [String: Int] = [:]
    private var instances: [String: [String]] = [:]
    var perNode = 64

    /// Attempt `index` of `model` started: the attempts its arrows come
    /// from (none but for a node's first attempt).
    mutating func started(_ index: Int, in model: TraceModel) -> [Int] {
        let attempt = model.attempts[index]
        let first = last[attempt.node] == nil
        last[attempt.node] = index
        guard first else { return [] }
        if let template = attempt.template { instances[template, default: []].append(attempt.node) }
        guard let names = model.needs[attempt.node] ?? attempt.template.flatMap({ model.needs[$0] }) else { return [] }
        var out: [Int] = []
        for need in names {
            for source in last[need] != nil ? [need] : instances[need] ?? [] {
                guard out.count < perNode, let from = last[source], from != index else { continue }
                out.append(from)
            }
        }
        return out
    }
}

/// A queue of the run: its name, its width and the lanes its attempts took.
public struct TraceQueue: Sendable, Equatable {
    public var name: String
    public var width: Int
    /// Lanes used (at most `width`, unless spans touched at a rounding edge).
    public var lanes = 0

    public init(name: String, width: Int, lanes: Int = 0) {
        self.name = name
        self.width = width
        self.lanes = lanes
    }
}

/// One attempt of a node: a span on lane `slot` of queue `queue`.
public struct TraceAttempt: Sendable, Equatable {
    public enum Outcome: String, Sendable {
        case succeeded, failed, canceled
        /// It failed and the node was tried again.
        case retried
        /// Still running when the trace ends (a run killed mid-way).
        case running
    }

    public var node: String
    /// The fan-out this node is an instance of.
    public var template: String?
    /// Index into `TraceModel.queues`.
    public var queue: Int
    /// 0-based lane within the queue: the lowest free when it started.
    public var slot: Int
    public var attempt: Int
    public var start: Int64
    public var duration: Int64
    /// From ready (its needs done) to its first attempt's start.
    public var waitedMilliseconds: Int?
    public var command: String
    public var outcome: Outcome
    public var exitCode: Int32?
    public var error: String?
    public var critical = false
    /// CPU time and peak memory of the node's processes (all its attempts), on its last attempt, when measured.
    public var usage: NodeUsage?

    public init(node: String, template: String? = nil, queue: Int, slot: Int, attempt: Int, start: Int64, duration: Int64 = 0,
                waitedMilliseconds: Int? = nil, command: String = "", outcome: Outcome = .running, exitCode: Int32? = nil,
                error: String? = nil, critical: Bool = false, usage: NodeUsage? = nil) {
        self.node = node
        self.template = template
        self.queue = queue
        self.slot = slot
        self.attempt = attempt
        self.start = start
        self.duration = duration
        self.waitedMilliseconds = waitedMilliseconds
        self.command = command
        self.outcome = outcome
        self.exitCode = exitCode
        self.error = error
        self.critical = critical
        self.usage = usage
    }
}

/// A node the output cache restored.
public struct TraceRestore: Sendable, Equatable {
    public var node: String
    public var time: Int64
    public var files: Int
    public var bytes: Int64

    public init(node: String, time: Int64, files: Int, bytes: Int64) {
        self.node = node
        self.time = time
        self.files = files
        self.bytes = bytes
    }
}
