import MoonEvents
import MoonRun

/// The up-to-date question in a rerun of watch mode: a node whose inputs
/// did not change (and that depends on none that did) stands as it ended
/// last time, with the outputs and values it had (`WatchResults`), so the
/// rerun runs only what the change touched; the others are asked of the
/// cache checker, as in a plain run. Every verdict and success passes
/// through here into `results`, whether the node was up to date, restored
/// from the cache, resumed or run.
package final class WatchChecker: UpToDateChecking {
    private let inner: CacheChecker
    /// Per run-plan index of the plan's nodes: whether the node runs again.
    private let rerun: [Bool]
    /// Per run-plan index of the plan's nodes: its name.
    private let names: [String]
    private let results: WatchResults

    package init(inner: CacheChecker, rerun: [Bool], names: [String], results: WatchResults) {
        self.inner = inner
        self.rerun = rerun
        self.names = names
        self.results = results
    }

    package var waitsOnNetwork: Bool { inner.waitsOnNetwork }

    /// An instance of a dynamic fan-out (past the plan's nodes) is asked of the store.
    package func checks(node: Int) -> Bool {
        (node < rerun.count && !rerun[node]) || inner.checks(node: node)
    }

    package func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        // A node not run again stands with its result; one without any (it
        // never ended as a success here, a service say) is asked as usual.
        if node < rerun.count, !rerun[node], let standing = results.result(of: names[node]) { return standing }
        return inner.upToDate(node: node, inputs: inputs).map { record($0, node) }
    }

    private func record(_ verdict: RestoredResult, _ node: Int) -> RestoredResult {
        if node < names.count { results.record(verdict, of: names[node]) }
        return verdict
    }

    package func expand(template: Int, items: [String], first: Int) -> Bool {
        inner.expand(template: template, items: items, first: first)
    }

    package func starting(nodes: [Int]) {
        inner.starting(nodes: nodes)
        results.forget(nodes.filter { $0 < names.count }.map { names[$0] })
    }

    package func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        inner.succeeded(node: node, outputs: outputs, values: values)
        if node < names.count { results.record(RestoredResult(outputs: outputs, values: values), of: names[node]) }
    }
}
