import Synchronization
/// What a command's `run` sends its results to: the sink of one execution.
///
/// Thread-safe; callable from any thread, any number of times. Only the
/// first terminal call (`complete` or `error`) counts; anything after it,
/// or after the execution was canceled, is ignored. The execution's
/// subscriber and the command's shared streams (`events`, `values`...)
/// receive the calls in order, never concurrently.
///
/// It is also the execution's handle: disposing it cancels the execution
/// (its work is disposed, the command's `events` get
/// ``CommandError/canceled``).
public final class CommandSink<Output: Sendable, Failure: Error>: Disposable {
    private struct State {
        /// True once the execution ended: terminal event accepted,
        /// canceled, or the command released.
        var ended = false
        var observer: Observer<Output>?
        var work: Cancelable?
        var endActions: [@Sendable () -> Void] = []
    }

    private let state: Mutex<State>
    private let registry: ExecutionRegistry<Output, Failure>
    /// The execution's number in the registry.
    let id: Int

    init(id: Int, registry: ExecutionRegistry<Output, Failure>, observer: Observer<Output>) {
        self.id = id
        self.registry = registry
        state = Mutex(State(observer: observer))
    }

    /// Sends a value.
    public func next(_ value: Output) { send(.next(value)) }

    /// Ends the execution successfully.
    public func complete() { send(.completed) }

    /// Ends the execution with its failure.
    public func error(_ error: Failure) { send(.failed(error)) }

    /// Sends a value and completes.
    public func complete(with value: Output) {
        next(value)
        complete()
    }

    /// Whether the execution still runs: false once it ended or was
    /// canceled. Long synchronous work can poll it.
    public var isActive: Bool { state.withLock { !$0.ended } }

    /// Runs `action` when the execution ends, by completion, error or
    /// cancellation (at once if it already has). An alternative to
    /// returning a cancelable from `run`.
    public func onEnd(_ action: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state -> Bool in
            if !state.ended { state.endActions.append(action) }
            return state.ended
        }
        if ended { action() }
    }

    public var isDisposed: Bool { !isActive }

    /// Cancels the execution: its work is disposed and its subscriber
    /// receives nothing more.
    public func dispose() {
        end(.interrupted(.canceled), deliver: false)
    }

    // MARK: For the command

    /// Ends the execution with one of the command's own errors (the
    /// command is released, or has no work).
    func interrupt(_ error: CommandError) {
        end(.interrupted(error), deliver: true)
    }

    /// Keeps what `run` returned, to dispose when the execution ends (at
    /// once if it already has).
    func setWork(_ work: Cancelable?) {
        guard let work else { return }
        let ended = state.withLock { state -> Bool in
            if !state.ended { state.work = work }
            return state.ended
        }
        if ended { work.dispose() }
    }

    private func send(_ event: ExecutionEvent<Output, Failure>) {
        if event.isTerminal {
            end(event, deliver: true)
            return
        }
        let accepted = state.withLock { state -> (Observer<Output>?, [SerialSink<ExecutionEvent<Output, Failure>>]?)? in
            guard !state.ended else { return nil }
            // Enqueued under this execution's lock: the shared streams see
            // its events in the order they were accepted.
            return (state.observer, registry.events.enqueue(.next(event)))
        }
        guard let accepted else { return }
        let (observer, shared) = accepted
        if let observer, let delivered = event.event { observer.send(delivered) }
        shared?.forEach { $0.drain() }
    }

    /// Marks the execution ended, then (outside the lock) cancels its work,
    /// runs the end actions and uncounts it, so that whoever receives the
    /// terminal event finds the command enabled again; then delivers it.
    private func end(_ event: ExecutionEvent<Output, Failure>, deliver: Bool) {
        let taken = state.withLock { state -> (State, [SerialSink<ExecutionEvent<Output, Failure>>]?)? in
            guard !state.ended else { return nil }
            state.ended = true
            defer { state = State(ended: true) }
            return (state, registry.events.enqueue(.next(event)))
        }
        guard let taken else { return }
        let (ended, shared) = taken
        ended.work?.dispose()
        for action in ended.endActions { action() }
        registry.unregister(self)
        if deliver, let observer = ended.observer, let delivered = event.event { observer.send(delivered) }
        shared?.forEach { $0.drain() }
    }
}

/// The executions' events as the command's shared streams see them: the
/// failure keeps its type, and an execution cut short says why.
enum ExecutionEvent<Output: Sendable, Failure: Error>: Sendable {
    case next(Output)
    case failed(Failure)
    case completed
    /// Canceled or released before `run` ended it.
    case interrupted(CommandError)
    /// An execution refused because the command was not enabled.
    case disabled

    var isTerminal: Bool {
        switch self {
        case .next, .disabled: return false
        case .failed, .completed, .interrupted: return true
        }
    }

    /// The event an execution's own subscriber receives.
    var event: Event<Output>? {
        switch self {
        case let .next(value): return .next(value)
        case let .failed(error): return .error(error)
        case .completed: return .completed
        case let .interrupted(error): return .error(error)
        case .disabled: return nil
        }
    }
}
