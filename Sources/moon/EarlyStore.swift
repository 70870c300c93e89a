import Foundation
import MoonProcess
import MoonSystem
import MoonGraph
import MoonState

/// The state store of a graph, opened by another thread while the graph
/// file loads, when the store already exists (a missing one is made only
/// after the file proved valid, as before: an invalid graph leaves no
/// `.moon/`). `EarlyGraph` has its helper thread open it; `RunCommand`,
/// when the early reading of the arguments was wrong, starts one itself.
final class EarlyStore: @unchecked Sendable {
    private let job: SharedJob<(StateStore.Opened, [String: Int]?)>?

    init(graphPath: String, create: Bool, startThread: Bool = true) {
        let database = StateStore.directory(besideGraphIn: Graph.directory(of: graphPath)) + "/state.db"
        guard FileManager.default.fileExists(atPath: database) else {
            job = nil
            return
        }
        let job = SharedJob { RunInvocation.openStore(graphPath: graphPath, create: create) }
        self.job = job
        if startThread { BackgroundThread.run(name: "moon.store") { job.runIfFree() } }
    }

    /// Opens the store here unless another thread has begun to.
    func runIfFree() {
        job?.runIfFree()
    }

    /// The store and durations; nil when the store did not exist yet.
    func result() -> (StateStore.Opened, [String: Int]?)? {
        job?.value
    }
}
