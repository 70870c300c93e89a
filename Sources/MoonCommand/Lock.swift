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
/// A `Lock` is a reference to one heap object that holds the
/// `pthread_mutex_t` (or `os_unfair_lock` on Darwin) in its own storage:
/// the C primitives need a stable address, which a Swift stored property
/// does not guarantee, and a `ManagedBuffer`'s elements have one. That is
/// one allocation per lock instead of two (an object plus a separately
/// allocated mutex). Copies of a `Lock` are the same lock.
public struct Lock {
    @usableFromInline let storage: LockStorage

    /// Creates an unlocked lock.
    public init() {
        storage = LockStorage.make()
    }

    /// Acquires the lock; pair every call with `defer { unlock() }`.
    @inlinable
    public func lock() {
        storage.withUnsafeMutablePointerToElements { raw in
            #if canImport(Darwin)
            os_unfair_lock_lock(raw)
            #else
            _ = pthread_mutex_lock(raw)
            #endif
        }
    }

    /// Releases the lock.
    @inlinable
    public func unlock() {
        storage.withUnsafeMutablePointerToElements { raw in
            #if canImport(Darwin)
            os_unfair_lock_unlock(raw)
            #else
            _ = pthread_mutex_unlock(raw)
            #endif
        }
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

#if canImport(Darwin)
@usableFromInline typealias PlatformMutex = os_unfair_lock
#else
@usableFromInline typealias PlatformMutex = pthread_mutex_t
#endif

/// The heap object of a ``Lock``: no header, one mutex as its only element.
@usableFromInline
final class LockStorage: ManagedBuffer<Void, PlatformMutex> {
    static func make() -> LockStorage {
        let buffer = create(minimumCapacity: 1) { _ in }
        let storage = unsafeDowncast(buffer, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { raw in
            #if canImport(Darwin)
            raw.initialize(to: os_unfair_lock())
            #else
            raw.initialize(to: pthread_mutex_t())
            // A normal (non-recursive) mutex: recursion would be a bug here,
            // since nothing calls out while holding a lock.
            pthread_mutex_init(raw, nil)
            #endif
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { raw in
            #if !canImport(Darwin)
            pthread_mutex_destroy(raw)
            #endif
            _ = raw.deinitialize(count: 1)
        }
    }
}
