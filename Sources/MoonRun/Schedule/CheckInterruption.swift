import Foundation
import Glibc
import MoonCommand
import Synchronization

/// Lets a long up-to-date check stop early. The check runs on moon's event
/// loop while it is quick; the source hasher polls `shouldStop` between
/// blocks (the `shouldStop` that `RunSession` and `WatchSession` hand the state, which points here), and on
/// the loop a check that hashes for longer than `loopBudget` stops, to be
/// done again on a worker thread (the runner's `WorkerPool`): meanwhile the loop goes on
/// handling signals, timers, a closed pipe and other nodes' output. A check
/// that is about to wait for a disk or a server (a cache restore, a remote
/// lookup) moves off the loop at once (`moveOffLoop`). A stop of the run
/// (`cancel`) ends a check wherever it runs, within one block, and tells
/// whatever waits for a server (`onCancel`).
public final class CheckInterruption: @unchecked Sendable {
    /// How long a check may hash on the loop before it moves off it.
    public static let loopBudget: UInt64 = 30_000_000

    private let lock = Mutex(())
    // Guarded by `lock`.
    private var canceled = false
    private var loopThread: pthread_t?
    private var deadline: UInt64 = 0
    private var overBudget = false
    private var cancelHandlers: [() -> Void] = []

    public init() {}

    /// Whether a check in progress on the calling thread should stop.
    public var shouldStop: Bool {
        return lock.withLock { _ in
            if canceled { return true }
            guard let loopThread, pthread_equal(loopThread, pthread_self()) != 0 else { return false }
            if monotonicNanoseconds() >= deadline { overBudget = true }
            return overBudget
        }
    }

    /// Whether the calling thread is the loop, within `onLoop`: then a check
    /// about to wait for I/O stops (`moveOffLoop`) and is done again on a
    /// worker thread.
    public func moveOffLoop() -> Bool {
        return lock.withLock { _ in
            guard !canceled, let loopThread, pthread_equal(loopThread, pthread_self()) != 0 else { return false }
            overBudget = true
            return true
        }
    }

    /// Calls `handler` once when the run stops (at once if it has).
    public func onCancel(_ handler: @escaping () -> Void) {
        let now = lock.withLock { _ in
            let now = canceled
            if !now { cancelHandlers.append(handler) }
            return now
        }
        if now { handler() }
    }

    /// The run stops: checks in progress end, and later ones end at once.
    public func cancel() {
        let handlers = lock.withLock { _ in
            canceled = true
            let handlers = cancelHandlers
            cancelHandlers = []
            return handlers
        }
        for handler in handlers { handler() }
    }

    public var isCanceled: Bool {
        return lock.withLock { _ in canceled }
    }

    /// Runs `check` on the calling thread (the loop) within `loopBudget`;
    /// nil when it took longer (its verdict does not count).
    func onLoop<T>(_ check: () -> T) -> T? {
        lock.withLock { _ in
            loopThread = pthread_self()
            deadline = monotonicNanoseconds() &+ Self.loopBudget
            overBudget = false
        }
        let result = check()
        let tooSlow = lock.withLock { _ in
            loopThread = nil
            let tooSlow = overBudget
            return tooSlow
        }
        return tooSlow ? nil : result
    }

    private func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
