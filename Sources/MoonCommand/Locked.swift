/// A value that many threads share, reached only under its own ``Lock``:
/// the pattern of `Synchronization.Mutex`, which needs newer Darwin
/// releases than this package supports.
///
/// Every piece of MoonCommand's shared mutable state lives in one of these,
/// so the compiler checks everything else for `Sendable`.
public final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is only reached inside `withLock`, under `lock`.
    private let lock = Lock()
    // Unchecked: `lock` already makes every access exclusive; the runtime's
    // own check would add a bookkeeping call to every `withLock`.
    @exclusivity(unchecked) private var state: State

    /// Shares `state`.
    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` on the state with the lock held. `body` must not call
    /// out (observers, user closures, schedulers).
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
