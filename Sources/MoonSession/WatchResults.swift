import MoonCommand
import MoonRun
import Synchronization

/// What each node stands with in watch mode when a rerun does not run
/// it: the outputs and values the runner last held for it, that is the
/// verdict of its up-to-date check (up to date, restored from the cache or
/// resumed) or its last success. `WatchChecker` records them, since it is
/// where the runner takes a skipped node's outputs from and reports a
/// success to, so they are the same ones a plain run's dependents see (and
/// the same the fingerprints of its dependents are taken with). By node
/// name: a graph reloaded for a new `for-each` file keeps the rest.
/// Called on the loop and the check workers.
package final class WatchResults: @unchecked Sendable {
    private let lock = Mutex(())
    private var results: [String: RestoredResult] = [:]

    package func result(of name: String) -> RestoredResult? {
        lock.withLock { _ in results[name] }
    }

    /// Later runs find it standing as it is: up to date, not restored again.
    package func record(_ result: RestoredResult, of name: String) {
        let standing = RestoredResult(outputs: result.outputs, values: result.values)
        lock.withLock { _ in results[name] = standing }
    }

    /// These nodes start again: until they succeed they have no result.
    package func forget(_ names: [String]) {
        lock.withLock { _ in for name in names { results[name] = nil } }
    }

    /// Keeps only the nodes of a reloaded plan that `keep` accepts.
    package func keep(where keep: (String) -> Bool) {
        lock.withLock { _ in results = results.filter { keep($0.key) } }
    }
}
