import Glibc

/// The one lock type of MoonProcess: a pthread mutex paired with a condition
/// variable.
///
/// Rules: take it with `withLock` (which pairs every lock with `defer`), keep
/// critical sections to bookkeeping and short system calls such as `kill(2)`
/// or `waitpid(WNOHANG)`, and never call user callbacks while holding it.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for `broadcast()`. Call only inside `withLock`; spurious wakeups
    /// happen, so re-check the awaited state in a loop.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Waits for `broadcast()` or until the `CLOCK_MONOTONIC` time
    /// `deadline` (nanoseconds) has passed, whichever comes first. Call only
    /// inside `withLock`; re-check the awaited state in a loop.
    func wait(untilMonotonic deadline: UInt64) {
        let now = LinuxCalls.monotonicNanoseconds()
        guard deadline > now else { return }
        // pthread_cond_timedwait measures CLOCK_REALTIME: convert the delay.
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let remaining = deadline - now
        let total = UInt64(realtime.tv_nsec) + remaining % 1_000_000_000
        var until = timespec()
        until.tv_sec = realtime.tv_sec + Int(remaining / 1_000_000_000) + Int(total / 1_000_000_000)
        until.tv_nsec = Int(total % 1_000_000_000)
        pthread_cond_timedwait(condition, mutex, &until)
    }

    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
