/// What a command's `run` sends its results to.
///
/// Thread-safe; callable from any thread, any number of times. Only the
/// first terminal call (`complete` or `error`) counts; anything after it,
/// or after the execution was canceled, is ignored. Calls reach observers
/// in order, never concurrently.
///
/// It is also the execution itself: its state and its registration with
/// the command live here, so an execution costs one object. How events
/// travel depends on how the command was executed (see
/// `CallbackExecution` and `SignalExecution`); outside MoonCommand this
/// class cannot be subclassed.
public class CommandResult<Output> {
    let registry: ExecutionRegistry<Output>
    // Protected by `registry.lock`.
    /// True once the execution ended: terminal event accepted, canceled,
    /// or the command released. Its work is then torn down.
    var ended = false
    /// Whether `registry` counts this execution (not when it was refused).
    var registered = false
    var work: Cancelable?
    var endActions: [() -> Void] = []
    /// Links of the registry's list of executions in flight. The newer
    /// execution holds the older one, so `newer` needs no reference count:
    /// the list is only walked and changed under the lock.
    var older: CommandResult<Output>?
    unowned(unsafe) var newer: CommandResult<Output>?

    init(registry: ExecutionRegistry<Output>) {
        self.registry = registry
    }

    /// Sends a value.
    public func next(_ value: Output) { send(.next(value)) }

    /// Ends the execution successfully.
    public func complete() { send(.completed) }

    /// Ends the execution with an error.
    public func error(_ error: Error) { send(.error(error)) }

    /// Sends a value and completes.
    public func complete(with value: Output) {
        next(value)
        complete()
    }

    /// Whether the execution still runs: false once it ended or was
    /// canceled. Long synchronous work can poll it.
    public var isActive: Bool {
        registry.lock.lock(); defer { registry.lock.unlock() }
        return !ended
    }

    /// Runs `action` when the execution ends, by completion, error or
    /// cancellation (at once if it already has). An alternative to
    /// returning a cancelable from `run`.
    public func onEnd(_ action: @escaping () -> Void) {
        registry.lock.lock()
        if ended {
            registry.lock.unlock()
            action()
            return
        }
        endActions.append(action)
        registry.lock.unlock()
    }

    // MARK: For the executions

    /// Delivers one event of `run`, the way this kind of execution does.
    func send(_ event: Event<Output>) {
        preconditionFailure("CommandResult.send is implemented by each kind of execution")
    }

    /// Ends the execution from outside with `error` (the command is
    /// released) and cancels its work.
    func terminate(_ error: Error) {
        preconditionFailure("CommandResult.terminate is implemented by each kind of execution")
    }

    /// Keeps what `run` returned, to dispose when the execution ends (at
    /// once if it already has).
    func setWork(_ work: Cancelable?) {
        guard let work else { return }
        registry.lock.lock()
        if ended {
            registry.lock.unlock()
            work.dispose()
            return
        }
        self.work = work
        registry.lock.unlock()
    }

    /// What is left to do once an execution ended, outside the lock.
    struct Teardown {
        let work: Cancelable?
        let actions: [() -> Void]
        let count: MutableProperty<Int>?
    }

    /// Marks the execution ended and unregisters it; caller holds the
    /// lock. Nil if it had already ended.
    func endLocked() -> Teardown? {
        if ended { return nil }
        ended = true
        let count = registered ? registry.removeLocked(self) : nil
        registered = false
        let teardown = Teardown(work: work, actions: endActions, count: count)
        work = nil
        endActions = []
        return teardown
    }

    /// Cancels the work, runs the end actions and uncounts the execution
    /// (in that order, so observers of `isExecuting` see it turn false only
    /// once the work is canceled). Outside the lock: all of these may call
    /// out.
    func tearDown(_ teardown: Teardown) {
        teardown.work?.dispose()
        for action in teardown.actions { action() }
        teardown.count?.modify { $0 -= 1 }
    }
}
