import Foundation
import MoonCommand
import MoonGraph
import MoonEvents
import MoonRun
import MoonState
import Synchronization

/// Connects the runner's up-to-date question to MoonState: maps the run
/// plan's node indices to the graph's and the needs' inputs to `NeedState`s.
package final class StoreChecker: UpToDateChecking {
    private let state: IncrementalState
    /// Run-plan index -> the state's node index (a graph node, or an
    /// instance of a dynamic fan-out it was given); nil for an instance it
    /// does not track. Grows on the loop while checks read it off the loop.
    private var graphIndex: [Int?]
    private let lock = Mutex(())
    private let graph: Graph

    package init(state: IncrementalState, plan: Plan) {
        self.state = state
        self.graph = plan.graph
        self.graphIndex = plan.selected
    }

    /// The state's index of run-plan node `node`, nil when it tracks none.
    package func stateIndex(_ node: Int) -> Int? {
        return lock.withLock { _ in node < graphIndex.count ? graphIndex[node] : nil }
    }

    package func checks(node: Int) -> Bool {
        stateIndex(node).map(state.isTracked) ?? false
    }

    /// A dynamic fan-out's instances are fingerprinted and remembered as
    /// static ones are, when their template is tracked (it has sources).
    package func expand(template: Int, items: [String], first: Int) -> Bool {
        var made: [Int?] = Array(repeating: nil, count: items.count)
        if let index = stateIndex(template), index < graph.nodes.count, state.isTracked(index) {
            let start = state.add(instances: graph.instances(ofDynamic: index, items: items))
            made = (start..<(start + items.count)).map { $0 }
        }
        return lock.withLock { _ in
            guard graphIndex.count == first else { return false }
            graphIndex += made
            return true
        }
    }

    package func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        guard let index = stateIndex(node) else { return nil }
        let needs = inputs.needs.enumerated().map { i, name in
            NeedState(name: name, result: inputs.results[name]?.rawValue ?? "success",
                      outputs: (inputs.outputs[name] ?? [:]).map { ($0.key, $0.value) },
                      values: i < inputs.values.count ? inputs.values[i] : [])
        }
        guard case .upToDate(let outputs, let values) = state.check(node: index, needs: needs) else { return nil }
        return RestoredResult(outputs: outputs.map { KeyValue($0.0, $0.1) }, values: values)
    }

    package func starting(nodes: [Int]) {
        state.starting(nodes: nodes.compactMap(stateIndex))
    }

    package func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        guard let index = stateIndex(node), state.isTracked(index) else { return }
        state.recordSuccess(node: index, outputs: outputs.map { ($0.key, $0.value) }, values: values)
    }
}

/// The run's history record, from the runner's summary: per node the first
/// start, the duration, the result and the attempts. Built once at the end
/// from what the runner already knows, so following the run costs nothing
/// per event.
package enum HistoryRecorder {
    package static func record(_ summary: Runner.Summary, graphKey: String, forced: Bool) -> RunRecord {
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
                                 result: result, attempts: node.attempts, cpuMilliseconds: node.usage?.cpuMilliseconds,
                                 maxRSSBytes: node.usage?.maxRSSBytes)
        }
        run.upToDate = run.nodes.filter { $0.result == .upToDate }.count
        run.skipped = run.nodes.filter { $0.result == .skipped }.count
        return run
    }
}

extension HistoryRecorder {
    /// Records the run in `store`'s history (`moon history`), an
    /// interrupted one marked so; a store that cannot take it is a warning.
    /// A plain run records once, watch mode once per run; a run that ran
    /// nothing (`ranNothing`: a no-op) is not recorded, and writes nothing.
    /// `trace`: the run's trace (`TraceRecordText`), kept beside it.
    package static func save(_ summary: Runner.Summary, state: IncrementalState, in store: StateStore, trace: String? = nil) {
        guard !summary.ranNothing else { return }
        var record = record(summary, graphKey: state.graphKey, forced: state.force)
        record.trace = trace
        if case .interrupt? = summary.stopReason { record.interrupted = true }
        do {
            try store.record(record)
        } catch {
            warn("cannot record this run in \(store.path) (\(store.failureReason(error)))")
        }
    }
}
