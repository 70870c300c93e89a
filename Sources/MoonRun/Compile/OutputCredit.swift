import Foundation

/// Backpressure for node output when the runner is not on the launcher's
/// thread (moon's event loop needs none: it reports what it read before it
/// reads again; see `CommandLauncher.init`'s `hopsThreads`). The launcher's thread takes a credit
/// for each line before handing it on, and the runner's queue gives it back
/// once the line has reached the reporter. When `limit` lines are in flight
/// the I/O thread waits, so it stops reading the pipes; a node that writes
/// faster than moon can report then blocks in `write`, as it would on a slow
/// terminal, instead of moon's memory growing without bound.
///
/// The consumer (the runner's queue) never waits for the I/O thread, so the
/// wait always ends. A condition variable rather than a DispatchSemaphore,
/// because a semaphore may not be released with credits still taken.
final class OutputCredit: @unchecked Sendable {
    let limit: Int
    private let condition = NSCondition()
    private var taken = 0

    init(limit: Int = 4096) {
        self.limit = max(1, limit)
    }

    /// Takes one credit, waiting while `limit` are out.
    func take() {
        condition.lock()
        defer { condition.unlock() }
        while taken >= limit { condition.wait() }
        taken += 1
    }

    /// Returns one credit.
    func give() {
        condition.lock()
        defer { condition.unlock() }
        taken -= 1
        if taken < limit { condition.signal() }
    }

    /// Credits out now (for tests).
    var outstanding: Int {
        condition.lock()
        defer { condition.unlock() }
        return taken
    }
}
