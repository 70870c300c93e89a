import Dispatch
import Foundation
import MoonProcess
import MoonGraph
import MoonState

/// The state store of a graph opened on another thread while the graph file
/// loads, when the store already exists (a missing one is made only after
/// the file proved valid, as before: an invalid graph leaves no `.moon/`).
final class EarlyStore: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var opened: (StateStore.Opened, [String: Int]?)?

    init(graphPath: String, create: Bool) {
        let database = StateStore.directory(besideGraphIn: Graph.directory(of: graphPath)) + "/state.db"
        guard FileManager.default.fileExists(atPath: database) else {
            done.signal()
            return
        }
        BackgroundThread.run { [self] in
            opened = RunCommand.openStore(graphPath: graphPath, create: create)
            done.signal()
        }
    }

    /// The store and durations; nil when the store did not exist yet.
    func result() -> (StateStore.Opened, [String: Int]?)? {
        done.wait()
        return opened
    }
}
