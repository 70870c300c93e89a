import Foundation
import MoonEvents

/// What a reporter knows about a run, built from its events alone (so a
/// replayed stream renders exactly like a live one). Both the terminal view
/// and the plain log keep one and render from it.
struct RunLedger {
    struct Running {
        var node: String
        var queue: String
        var attempt: Int
        var started: Date
        /// The last output, a whole line or bytes of one (or the start): for "stalled".
        var lastOutput: Date
        /// The end of the line the node is writing (no newline yet), shown in its status row.
        var partial: String?
        /// Kept in `commands` if the node fails.
        var command: String = ""
    }

    enum Outcome: Equatable {
        case succeeded
        case failed(NodeError)
        case skipped(SkipReason)
    }

    struct Finished {
        var node: String
        var outcome: Outcome
        var durationMilliseconds: Int?
        /// Whether it started (a group, or a template, ends without).
        var ran = false
        /// What its processes used (its event's `usage`).
        var usage: NodeUsage?
    }

    /// The instances of one template (a fan-out), counted as they end.
    struct Group {
        var total = 0
        /// Ran and succeeded.
        var succeeded = 0
        /// Skipped as up to date (or, with `--resume`, done in the run resumed).
        var upToDate = 0
        var restored = 0
        var failed = 0
        /// Skipped otherwise: a need failed, an `if`, the run stopping.
        var skipped = 0
        var canceled = 0
        /// When its first instance started.
        var started: Date?
        /// Whether a node of the plan stands for the template (a `for-each`
        /// over a need's output, expanded during the run) and ends with its own event.
        var hasNode = false
        var done: Int { ok + failed + skipped + canceled }
        /// The instances whose outputs stand: succeeded, up to date or restored.
        var ok: Int { succeeded + upToDate + restored }
    }

    struct End {
        var ok: Bool
        var durationMilliseconds: Int
        var counts: RunCounts
        var criticalPath: [String]
        /// The signal that stopped the run (`SIGINT`), if one did.
        var interrupted: String?
        /// The run's `--timeout` (`4s`), when it ended the run.
        var timedOut: String?
        /// Of the skipped nodes: those up to date (or resumed), those
        /// restored from the cache, and the bytes restored.
        var upToDateNodes = 0
        var restoredNodes = 0
        var restoredBytes: Int64 = 0
        /// Of the skipped nodes: those whose `confirm:` question, or a need's, was declined.
        var declinedNodes = 0
    }

    static let tailLines = 20

    private(set) var graph = ""
    private(set) var plan: [String] = []
    private(set) var started: Date?
    /// Running nodes in the order they started.
    private(set) var running: [Running] = []
    private(set) var finished: [String: Finished] = [:]
    /// Nodes whose failure fails the run (not cancellations), in the order they failed.
    private(set) var failures: [String] = []
    private(set) var commands: [String: String] = [:]
    private(set) var tails: [String: OutputTail] = [:]
    private(set) var end: End?
    /// Template name -> its instances, for the templates of the plan and those expanded during the run.
    private(set) var groups: [String: Group] = [:]
    private(set) var lastEventTime: Date?
    /// Nodes skipped as up to date (or resumed), not counting a template of the run's.
    private(set) var upToDateNodes = 0
    /// Nodes skipped as declined (their question, or a need's, answered no).
    private(set) var declinedNodes = 0
    /// Nodes restored from the output cache, and the bytes they restored.
    private(set) var restoredNodes = 0
    private(set) var restoredBytes: Int64 = 0
    /// Nodes that have ended (succeeded, failed, canceled or skipped).
    var done: Int { finished.count }
    var total: Int { max(plan.count, finished.count + running.count) }
    var failedCount: Int { failures.count }

    /// What one event changes in the run's tally: one case per event kind,
    /// each a few lines, so it stays one switch.
    mutating func apply(_ event: RunEvent) {
        lastEventTime = event.time
        switch event.kind {
        case .graphStart(let graph, let nodes, _):
            self.graph = graph
            plan = nodes
            finished.reserveCapacity(nodes.count)
            started = event.time
            for name in nodes {
                if let template = RunEvent.Instance.template(ofName: name) { groups[String(template), default: Group()].total += 1 }
            }
        case .start(let node, let queue, let attempt, let command, _):
            if started == nil { started = event.time }
            running.removeAll { $0.node == node }
            running.append(Running(node: node, queue: queue, attempt: attempt, started: event.time, lastOutput: event.time,
                                   command: command))
            // A new attempt's tail starts empty (made by its first line).
            if !tails.isEmpty { tails[node] = nil }
            if let template = Self.template(of: event), groups[template]?.started == nil { groups[template]?.started = event.time }
        case .next(let node, _, let text, _):
            if let i = running.firstIndex(where: { $0.node == node }) {
                running[i].lastOutput = event.time
                running[i].partial = event.partial ? text : nil
            }
            if event.partial { return }
            tails[node, default: OutputTail(limit: Self.tailLines)].append(text)
        case .retry(let node, _, _, _):
            running.removeAll { $0.node == node }
        case .complete(let node, let duration, _, _):
            let ran = stop(node)
            finished[node] = Finished(node: node, outcome: .succeeded, durationMilliseconds: duration, ran: ran, usage: event.usage)
            forget(node)
            count(event) { $0.succeeded += 1 }
        case .error(let node, let duration, let error):
            if error.kind != .canceled, let command = running.first(where: { $0.node == node })?.command, !command.isEmpty {
                commands[node] = command
            }
            let ran = stop(node)
            finished[node] = Finished(node: node, outcome: .failed(error), durationMilliseconds: duration, ran: ran, usage: event.usage)
            if error.kind != .canceled { failures.append(node) } else { forget(node) }
            count(event) { if error.kind == .canceled { $0.canceled += 1 } else { $0.failed += 1 } }
        case .skip(let node, let reason):
            running.removeAll { $0.node == node }
            finished[node] = Finished(node: node, outcome: .skipped(reason), durationMilliseconds: nil)
            if let restored = event.restored {
                restoredNodes += 1
                restoredBytes += restored.bytes
            } else if (reason == .upToDate || reason == .resumed) && groups[node]?.hasNode != true {
                upToDateNodes += 1
            } else if reason == .declined && groups[node]?.hasNode != true {
                declinedNodes += 1
            }
            forget(node)
            count(event) { group in
                if event.restored != nil || reason == .cacheHit {
                    group.restored += 1
                } else if reason == .upToDate || reason == .resumed {
                    group.upToDate += 1
                } else {
                    group.skipped += 1
                }
            }
        case .expand(let node, let instances):
            plan += instances
            groups[node, default: Group()].total += instances.count
            groups[node]!.hasNode = true
        case .graphComplete(let ok, let duration, let counts, let path):
            running.removeAll()
            end = End(ok: ok, durationMilliseconds: duration, counts: counts, criticalPath: path, interrupted: event.interrupted,
                      timedOut: event.timedOut, upToDateNodes: upToDateNodes, restoredNodes: restoredNodes, restoredBytes: restoredBytes,
                      declinedNodes: declinedNodes)
        case .watch:
            // Watch mode's trigger: the rerun's own events follow.
            break
        }
    }

    /// Removes the node from the running ones; whether it was there.
    private mutating func stop(_ node: String) -> Bool {
        guard let i = running.firstIndex(where: { $0.node == node }) else { return false }
        running.remove(at: i)
        return true
    }

    /// The template of the node an event is about, when that is an instance.
    static func template(of event: RunEvent) -> String? {
        if let instance = event.instance { return instance.template }
        return event.node.flatMap(RunEvent.Instance.template(ofName:)).map(String.init)
    }

    /// Counts the ending of an instance in its template's group.
    private mutating func count(_ event: RunEvent, _ change: (inout Group) -> Void) {
        guard let template = Self.template(of: event), groups[template] != nil else { return }
        change(&groups[template]!)
    }

    /// The command and output tail are kept for the summary of failed
    /// nodes only: a node that ended otherwise drops them, so a graph of
    /// thousands of nodes does not hold every node's last lines to the end.
    /// (Commands are only ever stored for failed nodes. A silent node has no
    /// tail: most have none, and then nothing is looked up.)
    private mutating func forget(_ node: String) {
        if !tails.isEmpty { tails[node] = nil }
    }

    /// The slowest nodes that ran, longest first (ties by name): not a
    /// group, nor a template of the run's, whose time is its instances'.
    func slowest(_ n: Int) -> [(node: String, milliseconds: Int)] {
        finished.values.compactMap { f -> (String, Int)? in
            guard let ms = f.durationMilliseconds, f.ran else { return nil }
            return (f.node, ms)
        }
        .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        .prefix(n)
        .map { (node: $0.0, milliseconds: $0.1) }
    }

    /// The `n` nodes with the most of `measure` (of their `usage`), most
    /// first (ties by name); empty unless more than one node has a usage:
    /// with one, "heaviest" says nothing the node's own line does not.
    func heaviest(_ n: Int, by measure: (NodeUsage) -> Int64) -> [(node: String, amount: Int64)] {
        let measured = finished.values.compactMap { f in f.usage.map { (f.node, measure($0)) } }
        guard measured.count > 1 else { return [] }
        return measured.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
            .prefix(n)
            .map { (node: $0.0, amount: $0.1) }
    }
}
