/// An execution started by a subscription to `Command.signal(_:)`.
///
/// Its events go straight to the subscription's observer, the serialising
/// gate of `Signal.init(_:)`, which enforces the grammar and, after the
/// terminal event, disposes the subscription's lifetime, and with it this
/// execution (which ends it). Disposing the subscription ends it the same
/// way, without an event.
final class SignalExecution<Output>: CommandResult<Output>, Disposable {
    private let observer: Observer<Output>

    init(registry: ExecutionRegistry<Output>, observer: Observer<Output>) {
        self.observer = observer
        super.init(registry: registry)
    }

    override func send(_ event: Event<Output>) {
        observer.send(event)
    }

    override func terminate(_ error: Error) {
        observer.send(error: error)
        dispose()
    }

    var isDisposed: Bool { !isActive }

    func dispose() {
        registry.lock.lock()
        let teardown = endLocked()
        registry.lock.unlock()
        if let teardown { tearDown(teardown) }
    }
}
