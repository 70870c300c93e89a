import Synchronization
/// What a command shares with its executions: which are in flight, whether
/// the command is enabled, and the shared stream of their events.
///
/// The executions hold it, not the command, so an execution that ends can
/// unregister itself after the command is gone (in-flight work does not
/// keep the command alive).
final class ExecutionRegistry<Output: Sendable, Failure: Error>: Sendable {
    /// What `isEnabled` and `isExecuting` are computed from, changed in one
    /// step so that two racing executions cannot both find the command
    /// enabled.
    struct Availability: Equatable, Sendable {
        var executing = 0
        /// The last value of the command's `enabledIf`.
        var userEnabled: Bool
    }

    let allowsConcurrentExecution: Bool
    let availability: MutableProperty<Availability>
    /// Every event of every execution, and every refusal.
    let events = Broadcast<ExecutionEvent<Output, Failure>>()
    /// In order of their ids, which only grow: an execution is appended,
    /// and found again by binary search (no hashing per execution).
    private let inFlight = Mutex((next: 0, executions: [CommandSink<Output, Failure>]()))

    init(allowsConcurrentExecution: Bool, userEnabled: Bool) {
        self.allowsConcurrentExecution = allowsConcurrentExecution
        availability = MutableProperty(Availability(userEnabled: userEnabled))
    }

    func isEnabled(_ availability: Availability) -> Bool {
        availability.userEnabled && (allowsConcurrentExecution || availability.executing == 0)
    }

    /// Counts and registers a new execution sending to `observer` if the
    /// command is enabled; nil (and a `disabledErrors` event) if it is not.
    func admit(_ observer: Observer<Output>) -> CommandSink<Output, Failure>? {
        let admitted = availability.modify { availability -> Bool in
            guard isEnabled(availability) else { return false }
            availability.executing += 1
            return true
        }
        guard admitted else {
            events.send(.next(.disabled))
            return nil
        }
        return inFlight.withLock { inFlight in
            let sink = CommandSink(id: inFlight.next, registry: self, observer: observer)
            inFlight.next += 1
            inFlight.executions.append(sink)
            return sink
        }
    }

    /// Unregisters and uncounts an execution that ended.
    func unregister(_ execution: CommandSink<Output, Failure>) {
        let removed = inFlight.withLock { inFlight -> CommandSink<Output, Failure>? in
            guard let index = inFlight.executions.index(ofID: execution.id, id: { $0.id }) else { return nil }
            return inFlight.executions.remove(at: index)
        }
        if removed != nil { availability.modify { $0.executing -= 1 } }
    }

    /// Ends every execution in flight with ``CommandError/released`` and
    /// completes the shared streams (the command is being released).
    func releaseAll() {
        let executions = inFlight.withLock { $0.executions }
        for execution in executions { execution.interrupt(.released) }
        events.finish()
    }
}
