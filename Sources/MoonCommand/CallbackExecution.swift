/// An execution started by `Command.execute(_:callbackOn:_:)`: the events
/// of `run` reach a callback on a scheduler the caller chose.
///
/// This is the lean path every node of a graph takes, so one object does
/// what a signal chain (`signal(_:)`, `deliverOn`, `start`) would do with a
/// dozen: it enforces the grammar (values, then one terminal event, then
/// nothing) under the command's lock, queues the events and hops to the
/// callback's scheduler, where one drain at a time delivers them in order,
/// up to 256 per turn before yielding the scheduler (as `deliverOn`
/// does). Canceling it (it is the cancelable `execute` returns) ends it
/// with ``CommandError/canceled``, which the callback receives as its last
/// call. It holds the command weakly: once the command is released,
/// callbacks stop.
final class CallbackExecution<Input, Output>: CommandResult<Output>, Disposable {
    typealias Callback = (_ command: Command<Input, Output>, _ value: Output?, _ error: Error?, _ isCompleted: Bool) -> Void

    private weak var command: Command<Input, Output>?
    private let scheduler: Scheduler
    // Protected by `registry.lock`.
    private var input: Input?
    /// Events not yet delivered. A drain takes them all at once (swapping
    /// the array out), not one by one: this code runs unspecialised for the
    /// client's `Output`, where every generic array operation costs metadata
    /// look-ups, and a queue popped per event was ~10% of moon's work per node.
    private var pending: [Event<Output>] = []
    /// Whether a drain is scheduled or running; at most one is.
    private var scheduled = false
    // Touched only by the drain (exclusivity is handed over through the
    // lock and `scheduled`); released after the terminal event.
    private var callback: Callback?

    init(command: Command<Input, Output>, registry: ExecutionRegistry<Output>, input: Input,
         scheduler: Scheduler, callback: @escaping Callback) {
        self.command = command
        self.input = input
        self.scheduler = scheduler
        self.callback = callback
        super.init(registry: registry)
    }

    /// Calls the command's `run`; on the command's execute scheduler.
    func start() {
        registry.lock.lock()
        let input = ended ? nil : self.input.take()
        registry.lock.unlock()
        // No command: it was released, which ended this execution.
        guard let input, let command else { return }
        setWork(command.run(input, result: self))
    }

    override func send(_ event: Event<Output>) {
        registry.lock.lock()
        if ended {
            registry.lock.unlock()
            return
        }
        pending.append(event)
        let schedule = !scheduled
        scheduled = true
        let teardown = event.isTerminal ? endLocked() : nil
        registry.lock.unlock()
        // Torn down before the terminal callback is scheduled, so the
        // callback finds the command enabled again.
        if let teardown { tearDown(teardown) }
        if schedule { scheduler.post { self.drain() } }
    }

    override func terminate(_ error: Error) {
        send(.error(error))
    }

    var isDisposed: Bool { !isActive }

    /// Cancels: the callback receives ``CommandError/canceled`` last
    /// (nothing happens if the execution already ended).
    func dispose() {
        send(.error(CommandError.canceled))
    }

    private func drain() {
        registry.lock.lock()
        var batch: [Event<Output>] = []
        swap(&batch, &pending)
        if batch.isEmpty {
            scheduled = false
            registry.lock.unlock()
            return
        }
        registry.lock.unlock()
        var delivered = 0
        for event in batch {
            // Up to 256 per turn: the rest goes back in front, for the next.
            if delivered == 256 {
                registry.lock.lock()
                pending.insert(contentsOf: batch[delivered...], at: 0)
                registry.lock.unlock()
                break
            }
            delivered += 1
            // No command, no callbacks: it was released (which ended this
            // execution, so nothing more will be queued).
            guard let command, let callback else {
                registry.lock.lock()
                pending.removeAll()
                scheduled = false
                registry.lock.unlock()
                self.callback = nil
                return
            }
            switch event {
            case let .next(value): callback(command, value, nil, false)
            case let .error(error): callback(command, nil, error, true)
            case .completed: callback(command, nil, nil, true)
            }
            if event.isTerminal { self.callback = nil }
        }
        registry.lock.lock()
        if pending.isEmpty {
            scheduled = false
            registry.lock.unlock()
            return
        }
        registry.lock.unlock()
        // More waiting: yield the scheduler, keeping `scheduled` set.
        scheduler.post { self.drain() }
    }
}
