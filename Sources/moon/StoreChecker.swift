import Foundation
import MoonGraph
import MoonRun
import MoonState

/// Connects the runner's up-to-date question to MoonState: maps the run
/// plan's node indices to the graph's and the needs' inputs to `NeedState`s.
final class StoreChecker: UpToDateChecking {
    private let state: IncrementalState
    /// Run-plan index -> graph node index.
    private let graphIndex: [Int]
    private let graph: Graph

    init(state: IncrementalState, plan: Plan) {
        self.state = state
        self.graph = plan.graph
        self.graphIndex = plan.selected
    }

    func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        let needs = inputs.needs.enumerated().map { i, name in
            NeedState(name: name, result: inputs.results[name] ?? "success",
                      outputs: (inputs.outputs[name] ?? [:]).map { ($0.key, $0.value) },
                      values: i < inputs.values.count ? inputs.values[i] : [])
        }
        guard case .upToDate(let outputs, let values) = state.check(node: graphIndex[node], needs: needs) else { return nil }
        return RestoredResult(outputs: outputs.map { KeyValue($0.0, $0.1) }, values: values)
    }

    func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        state.recordSuccess(node: graphIndex[node], outputs: outputs.map { ($0.key, $0.value) }, values: values)
    }
}

/// Turns the run's events into its history record: per node the first
/// start, the duration, the result and the attempts.
final class HistoryRecorder {
    private var run: RunRecord
    /// Per node, in the order it first appeared; `position` finds it (one
    /// hash of the name per event).
    private var nodes: [NodeRunRecord] = []
    private var position: [String: Int] = [:]

    init(graphKey: String, forced: Bool) {
        run = RunRecord(graph: graphKey, startedAt: Date(), forced: forced)
    }

    func observe(_ event: RunEvent) {
        switch event.kind {
        case .graphStart:
            run.startedAt = event.time
        case .start(let node, _, let attempt, _):
            update(node, new: NodeRunRecord(node: node, startedAt: event.time, result: .canceled)) { record in
                if record.startedAt == nil { record.startedAt = event.time }
                record.attempts = attempt
            }
        case .complete(let node, let duration, _, _):
            update(node) { $0.result = .succeeded; $0.durationMilliseconds = duration }
        case .error(let node, let duration, let error):
            update(node) { $0.result = error.kind == .canceled ? .canceled : .failed; $0.durationMilliseconds = duration }
        case .skip(let node, let reason):
            let record = NodeRunRecord(node: node, result: reason == .upToDate ? .upToDate : .skipped)
            update(node, new: record) { $0 = record }
            if reason == .upToDate { run.upToDate += 1 } else { run.skipped += 1 }
        case .graphComplete(let ok, let duration, let counts, _):
            run.ok = ok
            run.durationMilliseconds = duration
            run.succeeded = counts.succeeded
            run.failed = counts.failed
            run.canceled = counts.canceled
        case .next, .retry:
            break
        }
    }

    /// Changes the record of `node`, made from `new` if it has none yet.
    private func update(_ node: String, new: @autoclosure () -> NodeRunRecord? = nil,
                        _ change: (inout NodeRunRecord) -> Void) {
        let index: Int
        if let known = position[node] {
            index = known
        } else {
            index = nodes.count
            position[node] = index
            nodes.append(new() ?? NodeRunRecord(node: node, result: .failed))
        }
        change(&nodes[index])
    }

    var record: RunRecord {
        var result = run
        result.nodes = nodes
        return result
    }
}
