#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The project's one mutual-exclusion primitive: a pthread mutex with a
/// condition variable.
///
/// Use it as `lock.withLock { … }` (or `lock(); defer { unlock() }`) around
/// a few lines that read or write state, and never call an observer, a
/// closure or a scheduler while holding it: that keeps re-entrancy and
/// lock-ordering deadlocks impossible by construction. A thread that must
/// wait for another's change holds the lock and calls ``wait()`` (or
/// ``wait(timeout:)``); the changer calls ``broadcast()``.
public final class Lock: @unchecked Sendable {
    // @unchecked: the mutex and condition variable are made for use from
    // many threads; their storage is allocated once and never moves.
    private struct Primitives {
        var mutex = pthread_mutex_t()
        var condition = pthread_cond_t()
    }

    private let primitives: UnsafeMutablePointer<Primitives>
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        UnsafeMutableRawPointer(primitives).assumingMemoryBound(to: pthread_mutex_t.self)
    }
    private var condition: UnsafeMutablePointer<pthread_cond_t> {
        (UnsafeMutableRawPointer(primitives) + MemoryLayout<Primitives>.offset(of: \.condition)!)
            .assumingMemoryBound(to: pthread_cond_t.self)
    }

    /// Creates an unlocked lock.
    public init() {
        primitives = .allocate(capacity: 1)
        primitives.initialize(to: Primitives())
        // A normal (non-recursive) mutex: recursion would be a bug, since
        // nothing calls out while holding a lock.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        primitives.deinitialize(count: 1)
        primitives.deallocate()
    }

    /// Acquires the lock; pair every call with `defer { unlock() }`.
    public func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Releases the lock.
    public func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with the lock held. `body` must not call out (observers,
    /// user closures, schedulers).
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Releases the lock until ``broadcast()`` or ``signal()`` wakes this
    /// thread, then takes it again. Call it with the lock held, in a loop
    /// that rechecks the awaited condition (wake-ups may be spurious).
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Like ``wait()``, giving up after `timeout` (on the wall clock, as
    /// `pthread_cond_timedwait` measures). Returns false when it timed out.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = Int64(now.tv_nsec) + timeout.clampedNanoseconds()
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + Int(total / 1_000_000_000)
        deadline.tv_nsec = Int(total % 1_000_000_000)
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Wakes one thread waiting on this lock.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting on this lock.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
