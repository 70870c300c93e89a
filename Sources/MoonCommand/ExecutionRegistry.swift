/// A command's executions in flight and their count.
///
/// Shared by the command and its executions, so an execution that ends
/// can unregister itself without the command, which may already be gone
/// (in-flight work does not keep it alive). Its lock also guards the state
/// of every execution of the command: one lock per command, none per
/// execution.
final class ExecutionRegistry<Output> {
    /// Guards this registry and the executions' own state.
    let lock = Lock()
    private let allowsConcurrentExecution: Bool
    // Protected by `lock`.
    /// Executions in flight while `observed` is nil; from the moment it
    /// exists, `observed.count` is the count and this is unused.
    private var count = 0
    /// The newest execution in flight; each links to the one before, so
    /// adding and removing cost no allocation.
    private var newest: CommandResult<Output>?
    /// Made on the first read of `isExecuting` or `isEnabled`: most
    /// commands are executed without anyone observing them, and the
    /// properties and their signals were most of the cost of a command.
    private var observed: ObservedCount?

    /// The count as properties.
    struct ObservedCount {
        let count: MutableProperty<Int>
        let isExecuting: Property<Bool>
        let isEnabled: Property<Bool>
    }

    init(allowsConcurrentExecution: Bool) {
        self.allowsConcurrentExecution = allowsConcurrentExecution
    }

    /// The count's properties, made on first use with the current count.
    func observedCount() -> ObservedCount {
        lock.lock(); defer { lock.unlock() }
        if let observed { return observed }
        let count = MutableProperty(self.count)
        let concurrent = allowsConcurrentExecution
        let made = ObservedCount(
            count: count,
            isExecuting: Property(count) { $0 > 0 },
            isEnabled: Property(count) { concurrent || $0 == 0 })
        observed = made
        return made
    }

    /// Counts and registers `execution` if the command is enabled; false
    /// (nothing registered) if it is not.
    func admit(_ execution: CommandResult<Output>) -> Bool {
        let concurrent = allowsConcurrentExecution
        lock.lock()
        if let observed {
            // The property is the count: check and count in one step of
            // its own, so two racing executions cannot both see the
            // command enabled, and observers see every change in order.
            lock.unlock()
            let admitted = observed.count.modify { count -> Bool in
                if !concurrent && count > 0 { return false }
                count += 1
                return true
            }
            guard admitted else { return false }
            lock.lock()
        } else {
            if !concurrent && count > 0 {
                lock.unlock()
                return false
            }
            count += 1
        }
        execution.registered = true
        execution.older = newest
        newest?.newer = execution
        newest = execution
        lock.unlock()
        return true
    }

    /// Unregisters `execution` and uncounts it; caller holds `lock`.
    /// Returns the count property to decrement once the lock is released
    /// (nil: already done).
    func removeLocked(_ execution: CommandResult<Output>) -> MutableProperty<Int>? {
        if let newer = execution.newer {
            newer.older = execution.older
        } else {
            newest = execution.older
        }
        execution.older?.newer = execution.newer
        execution.older = nil
        execution.newer = nil
        guard let observed else {
            count -= 1
            return nil
        }
        return observed.count
    }

    /// Ends every execution in flight with ``CommandError/released`` (the
    /// command is being released). The error is made only if there is an
    /// execution to end: boxing it is an allocation per command.
    func releaseAll() {
        while true {
            let execution: CommandResult<Output>? = {
                lock.lock(); defer { lock.unlock() }
                return newest
            }()
            // Terminating unregisters it, so the loop moves on.
            guard let execution else { return }
            execution.terminate(CommandError.released)
        }
    }
}
