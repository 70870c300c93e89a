#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one mutual-exclusion primitive of MoonCommand.
///
/// Use it as `lock.lock(); defer { lock.unlock() }` around a few lines that
/// read or write state, and never call an observer, a closure or a scheduler
/// while holding it: that keeps re-entrancy and lock-ordering deadlocks
/// impossible by construction.
///
/// It is a class owning one heap-allocated `pthread_mutex_t` (or
/// `os_unfair_lock` on Darwin): the C primitives need a stable address,
/// which a Swift stored property does not guarantee.
public final class Lock {
    #if canImport(Darwin)
    @usableFromInline let raw: UnsafeMutablePointer<os_unfair_lock>
    #else
    @usableFromInline let raw: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// Creates an unlocked lock.
    public init() {
        #if canImport(Darwin)
        raw = .allocate(capacity: 1)
        raw.initialize(to: os_unfair_lock())
        #else
        raw = .allocate(capacity: 1)
        raw.initialize(to: pthread_mutex_t())
        // A normal (non-recursive) mutex: recursion would be a bug here,
        // since nothing calls out while holding a lock.
        pthread_mutex_init(raw, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(raw)
        #endif
        raw.deinitialize(count: 1)
        raw.deallocate()
    }

    /// Acquires the lock; pair every call with `defer { unlock() }`.
    @inlinable
    public func lock() {
        #if canImport(Darwin)
        os_unfair_lock_lock(raw)
        #else
        pthread_mutex_lock(raw)
        #endif
    }

    /// Releases the lock.
    @inlinable
    public func unlock() {
        #if canImport(Darwin)
        os_unfair_lock_unlock(raw)
        #else
        pthread_mutex_unlock(raw)
        #endif
    }

    /// Runs `body` with the lock held. `body` must not call out (observers,
    /// user closures, schedulers).
    @inlinable
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
