import Foundation
import MoonGraph
import MoonEvents
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

    func checks(node: Int) -> Bool {
        state.isTracked(graphIndex[node])
    }

    func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        let needs = inputs.needs.enumerated().map { i, name in
            NeedState(name: name, result: inputs.results[name]?.rawValue ?? "success",
                      outputs: (inputs.outputs[name] ?? [:]).map { ($0.key, $0.value) },
                      values: i < inputs.values.count ? inputs.values[i] : [])
        }
        guard case .upToDate(let outputs, let values) = state.check(node: graphIndex[node], needs: needs) else { return nil }
        return RestoredResult(outputs: outputs.map { KeyValue($0.0, $0.1) }, values: values)
    }

    func starting(nodes: [Int]) {
        state.starting(nodes: nodes.map { graphIndex[$0] })
    }

    func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        guard state.isTracked(graphIndex[node]) else { return }
        state.recordSuccess(node: graphIndex[node], outputs: outputs.map { ($0.key, $0.value) }, values: values)
    }
}

/// The run's history record, from the runner's summary: per node the first
/// start, the duration, the result and the attempts. Built once at the end
/// from what the runner already knows, so following the run costs nothing
/// per event.
enum HistoryRecorder {
    static func record(_ summary: Runner.Summary, graphKey: String, forced: Bool) -> RunRecord {
        var run = RunRecord(graph: graphKey, startedAt: summary.startedAt, durationMilliseconds: summary.durationMilliseconds,
                            ok: summary.ok, forced: forced)
        run.succeeded = summary.counts.succeeded
        run.failed = summary.counts.failed
        run.canceled = summary.counts.canceled
        run.nodes = summary.nodes.map { node in
            let result: NodeRunRecord.Result
            switch node.result {
            case .succeeded: result = .succeeded
            case .failed: result = .failed
            case .canceled: result = .canceled
            case .skipped: result = .skipped
            case .upToDate: result = .upToDate
            }
            return NodeRunRecord(node: node.name, startedAt: node.startedAt, durationMilliseconds: node.durationMilliseconds,
                                 result: result, attempts: node.attempts)
        }
        run.upToDate = run.nodes.filter { $0.result == .upToDate }.count
        run.skipped = run.nodes.filter { $0.result == .skipped }.count
        return run
    }
}
