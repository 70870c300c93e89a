import MoonEvents
import MoonRun

/// The up-to-date question in a rerun of watch mode: a node whose inputs
/// did not change (and that depends on none that did) stands as it ended
/// last time, with the outputs it had, so the rerun runs only what the
/// change touched; the others are asked of the state store as usual.
final class WatchChecker: UpToDateChecking {
    private let store: StoreChecker
    /// Per run-plan index: whether the node runs again.
    private let rerun: [Bool]
    /// Per run-plan index: the outputs of its last success in this watch.
    private let previous: [RestoredResult?]

    init(store: StoreChecker, rerun: [Bool], previous: [RestoredResult?]) {
        self.store = store
        self.rerun = rerun
        self.previous = previous
    }

    /// An instance of a dynamic fan-out (past the plan's nodes) is asked of the store.
    func checks(node: Int) -> Bool {
        (node < rerun.count && !rerun[node]) || store.checks(node: node)
    }

    func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        guard node >= rerun.count || rerun[node] else { return previous[node] ?? RestoredResult() }
        return store.upToDate(node: node, inputs: inputs)
    }

    func expand(template: Int, items: [String], first: Int) -> Bool {
        store.expand(template: template, items: items, first: first)
    }

    func starting(nodes: [Int]) {
        store.starting(nodes: nodes)
    }

    func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        store.succeeded(node: node, outputs: outputs, values: values)
    }
}
