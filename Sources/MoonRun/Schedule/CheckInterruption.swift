import Foundation
import Glibc
import MoonCommand

/// Lets a long up-to-date check stop early. The check runs on moon's event
/// loop while it is quick; the source hasher polls `shouldStop` between
/// blocks (`ContentHash.shouldStop`, which `moon run` points here), and on
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

    private let lock = Lock()
    // Guarded by `lock`.
    private var canceled = false
    private var loopThread: pthread_t?
    private var deadline: UInt64 = 0
    private var overBudget = false
    private var cancelHandlers: [() -> Void] = []

    public init() {}

    /// Whether a check in progress on the calling thread should stop.
    public var shouldStop: Bool {
        lock.lock()
        defer { lock.unlock() }
        if canceled { return true }
        guard let loopThread, pthread_equal(loopThread, pthread_self()) != 0 else { return false }
        if monotonicNanoseconds() >= deadline { overBudget = true }
        return overBudget
    }

    /// Whether the calling thread is the loop, within `onLoop`: then a check
    /// about to wait for I/O stops (`moveOffLoop`) and is done again on a
    /// worker thread.
    public func moveOffLoop() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !canceled, let loopThread, pthread_equal(loopThread, pthread_self()) != 0 else { return false }
        overBudget = true
        return true
    }

    /// Calls `handler` once when the run stops (at once if it has).
    public func onCancel(_ handler: @escaping () -> Void) {
        lock.lock()
        let now = canceled
        if !now { cancelHandlers.append(handler) }
        lock.unlock()
        if now { handler() }
    }

    /// The run stops: checks in progress end, and later ones end at once.
    public func cancel() {
        lock.lock()
        canceled = true
        let handlers = cancelHandlers
        cancelHandlers = []
        lock.unlock()
        for handler in handlers { handler() }
    }

    public var isCanceled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return canceled
    }

    /// Runs `check` on the calling thread (the loop) within `loopBudget`;
    /// nil when it took longer (its verdict does not count).
    func onLoop<T>(_ check: () -> T) -> T? {
        lock.lock()
        loopThread = pthread_self()
        deadline = monotonicNanoseconds() &+ Self.loopBudget
        overBudget = false
        lock.unlock()
        let result = check()
        lock.lock()
        loopThread = nil
        let tooSlow = overBudget
        lock.unlock()
        return tooSlow ? nil : result
    }

    private func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
