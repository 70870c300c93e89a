import Dispatch

/// A unit of work with a result stream: the RACCommand-style base of moon.
///
/// Provide the work by subclassing and overriding
/// ``run(_:result:)``, or by passing an `execute` block. Then run it in
/// one of three ways:
///
/// 1. `execute(_:callbackOn:_:)` with a closure
///    `(command, value?, error?, isCompleted)`;
/// 2. `execute(_:callbackOn:callback:)` with a ``CommandCallback`` object,
///    held weakly;
/// 3. `signal(_:)`, a cold ``Signal`` to compose with others: each start
///    is one execution.
///
/// ## Queues
/// `run` is called on ``executeScheduler``: a serial queue of the
/// command's own by default, the ``executeQueue`` given, or any scheduler
/// (moon runs its node commands on its event loop). Callbacks of `execute` arrive on
/// the queue (or scheduler) the caller passes, never on the execution
/// queue unless the caller asks for it. Signal subscribers receive events
/// on whatever thread `run` sends them from; add `deliverOn` to choose.
///
/// ## Enabled, executing, disabled
/// ``isExecuting`` is true while at least one execution is in flight (from
/// its start to its terminal event or cancellation). Unless
/// ``allowsConcurrentExecution`` is true, the command is not enabled while
/// executing, and executing it then fails at once with
/// ``CommandError/disabled`` (nothing runs, and the running execution is
/// not disturbed).
///
/// ## Cancellation
/// - Disposing a subscription to `signal(_:)` cancels that execution: the
///   cancelable `run` returned is disposed; no further event arrives.
/// - Canceling what `execute` returned cancels the work the same way, and
///   the callback then receives ``CommandError/canceled`` as its last
///   call, so every `execute` ends with exactly one terminal callback.
/// - Releasing the command cancels every execution in flight; their
///   signals fail with ``CommandError/released``. Callbacks of `execute`
///   stop (there is no command left to report about). In-flight work does
///   not keep the command alive, which is what makes this possible.
open class Command<Input, Output>: AnyCommand {
    /// Where `run` executes.
    public let executeScheduler: Scheduler
    /// The queue `run` executes on, unless the command was made with a
    /// scheduler that is not a queue.
    public let executeQueue: DispatchQueue?
    /// Whether a new execution may start while one is running.
    public let allowsConcurrentExecution: Bool
    /// Whether an execution is in flight; current value plus changes.
    public let isExecuting: Property<Bool>
    /// Whether executing now would run (false while executing unless
    /// concurrent execution is allowed).
    public let isEnabled: Property<Bool>

    private let explicitName: String?
    private let executeBlock: ((Input, CommandResult<Output>) -> Cancelable?)?
    private let inFlightCount: MutableProperty<Int>
    private let registry = ExecutionRegistry()

    /// A command whose work is `execute`, or, without one, its
    /// ``run(_:result:)`` override (subclass and override `run`).
    ///
    /// - Parameters:
    ///   - name: for logs and callbacks; defaults to the type's name.
    ///   - executeQueue: where `run` is called; by default a serial queue
    ///     of the command's own (an overcommitting queue: a `run` that
    ///     blocks does not starve Dispatch's global pool).
    ///   - executeOn: where `run` is called instead of a queue, e.g. an
    ///     event loop's scheduler; takes precedence over `executeQueue`.
    ///   - allowsConcurrentExecution: whether executions may overlap.
    ///   - execute: called on `executeScheduler` with the input and the result
    ///     to send to; returns a cancelable for work that continues after
    ///     the block returns (or nil).
    public init(
        name: String? = nil,
        executeQueue: DispatchQueue? = nil,
        executeOn scheduler: Scheduler? = nil,
        allowsConcurrentExecution: Bool = false,
        execute: ((_ input: Input, _ result: CommandResult<Output>) -> Cancelable?)? = nil
    ) {
        self.explicitName = name
        if let scheduler {
            executeScheduler = scheduler
            self.executeQueue = (scheduler as? QueueScheduler)?.queue
        } else {
            let queue = executeQueue ?? DispatchQueue(label: "moon.command.\(name ?? String(describing: Self.self))")
            executeScheduler = QueueScheduler(queue: queue)
            self.executeQueue = queue
        }
        self.allowsConcurrentExecution = allowsConcurrentExecution
        self.executeBlock = execute
        let count = MutableProperty(0)
        inFlightCount = count
        isExecuting = Property(count) { $0 > 0 }
        isEnabled = Property(count) { allowsConcurrentExecution || $0 == 0 }
    }

    deinit {
        registry.failAll(CommandError.released)
    }

    /// A name for logs and callbacks.
    public var name: String { explicitName ?? String(describing: type(of: self)) }

    /// The work. Called on ``executeScheduler`` once per execution; send
    /// values and exactly one terminal event to `result`, synchronously or
    /// later from any thread. Return a cancelable that stops work still
    /// going on (or nil); it is disposed when the execution is canceled or
    /// ends.
    ///
    /// The default calls the execute block, or fails with
    /// ``CommandError/notImplemented``.
    open func run(_ input: Input, result: CommandResult<Output>) -> Cancelable? {
        guard let executeBlock else {
            result.error(CommandError.notImplemented)
            return nil
        }
        return executeBlock(input, result)
    }

    // MARK: Signal

    /// A cold signal of one execution per start: its values, then its
    /// completion or error. Starting it while disabled fails with
    /// ``CommandError/disabled``. The signal does not keep the command
    /// alive.
    public func signal(_ input: Input) -> Signal<Output> {
        makeSignal(input, onBegin: nil)
    }

    private func makeSignal(_ input: Input, onBegin: ((Execution) -> Void)?) -> Signal<Output> {
        Signal({ [weak self] observer, lifetime in
            guard let self else {
                observer.send(error: CommandError.released)
                return
            }
            self.begin(input, observer: observer, lifetime: lifetime, onBegin: onBegin)
        })
    }

    private func begin(
        _ input: Input,
        observer: Observer<Output>,
        lifetime: CompositeDisposable,
        onBegin: ((Execution) -> Void)?
    ) {
        let concurrent = allowsConcurrentExecution
        // Check and count in one step, so two racing executions cannot
        // both see the command enabled.
        let admitted = inFlightCount.modify { count -> Bool in
            if !concurrent && count > 0 { return false }
            count += 1
            return true
        }
        guard admitted else {
            observer.send(error: CommandError.disabled)
            return
        }
        let work = SerialDisposable()
        let execution = Execution(observer: observer, work: work)
        let id = registry.add(execution)
        // Disposal order: the run's work first, then the count, so
        // `isExecuting` turns false only once the work is canceled.
        lifetime.add(work)
        let count = inFlightCount
        let registry = self.registry
        lifetime.add {
            registry.remove(id)
            count.modify { $0 -= 1 }
        }
        onBegin?(execution)
        let result = CommandResult(observer: observer, lifetime: lifetime)
        let start = { [weak self] in
            if lifetime.isDisposed { return }
            guard let self else {
                observer.send(error: CommandError.released)
                return
            }
            work.inner = self.run(input, result: result)
        }
        if let queue = executeQueue {
            queue.async { start() }
        } else {
            executeScheduler.schedule(start)
        }
    }

    // MARK: Execute with callbacks

    /// Executes once; `callback` receives
    /// `(command, value, nil, false)` for each value, then
    /// `(command, nil, nil, true)` on completion or
    /// `(command, nil, error, true)` on failure, on `queue`.
    ///
    /// - Returns: cancels the execution; the callback then receives
    ///   ``CommandError/canceled`` (unless the execution already ended).
    @discardableResult
    public func execute(
        _ input: Input,
        callbackOn queue: DispatchQueue,
        _ callback: @escaping (_ command: Command<Input, Output>, _ value: Output?, _ error: Error?, _ isCompleted: Bool) -> Void
    ) -> Cancelable {
        execute(input, callbackOn: QueueScheduler(queue: queue), callback)
    }

    /// Like `execute(_:callbackOn:_:)` with a queue, delivering on any
    /// scheduler (a ``TestScheduler`` in tests).
    @discardableResult
    public func execute(
        _ input: Input,
        callbackOn scheduler: Scheduler,
        _ callback: @escaping (_ command: Command<Input, Output>, _ value: Output?, _ error: Error?, _ isCompleted: Bool) -> Void
    ) -> Cancelable {
        executeEvents(input, on: scheduler) { command, event in
            switch event {
            case let .next(value): callback(command, value, nil, false)
            case let .error(error): callback(command, nil, error, true)
            case .completed: callback(command, nil, nil, true)
            }
        }
    }

    /// Executes once, reporting to `callback` (held weakly) on `queue`.
    @discardableResult
    public func execute<Callback: CommandCallback>(
        _ input: Input,
        callbackOn queue: DispatchQueue,
        callback: Callback
    ) -> Cancelable where Callback.Output == Output {
        execute(input, callbackOn: QueueScheduler(queue: queue), callback: callback)
    }

    /// Executes once, reporting to `callback` (held weakly) on `scheduler`.
    @discardableResult
    public func execute<Callback: CommandCallback>(
        _ input: Input,
        callbackOn scheduler: Scheduler,
        callback: Callback
    ) -> Cancelable where Callback.Output == Output {
        executeEvents(input, on: scheduler) { [weak callback] command, event in
            guard let callback else { return }
            switch event {
            case let .next(value): callback.onNext(command, value: value)
            case let .error(error): callback.onError(command, error: error)
            case .completed: callback.onComplete(command)
            }
        }
    }

    private func executeEvents(
        _ input: Input,
        on scheduler: Scheduler,
        _ handler: @escaping (Command<Input, Output>, Event<Output>) -> Void
    ) -> Cancelable {
        let started = ExecutionSlot()
        let subscription = makeSignal(input, onBegin: { started.set($0) })
            .deliverOn(scheduler)
            .start { [weak self] event in
                // No command, no callbacks: it was released.
                guard let self else { return }
                handler(self, event)
            }
        return ActionDisposable {
            if let execution = started.get() {
                // Ends the execution with `canceled`, which travels to the
                // callback queue like any other event.
                execution.fail(CommandError.canceled)
            } else {
                subscription.dispose()
            }
        }
    }
}

extension Command where Input == Void {
    /// A cold signal of one execution per start (see `signal(_:)`).
    public func signal() -> Signal<Output> { signal(()) }

    /// Executes once with a closure callback on `queue`.
    @discardableResult
    public func execute(
        callbackOn queue: DispatchQueue,
        _ callback: @escaping (_ command: Command<Input, Output>, _ value: Output?, _ error: Error?, _ isCompleted: Bool) -> Void
    ) -> Cancelable {
        execute((), callbackOn: queue, callback)
    }

    /// Executes once with a callback object (held weakly) on `queue`.
    @discardableResult
    public func execute<Callback: CommandCallback>(
        callbackOn queue: DispatchQueue,
        callback: Callback
    ) -> Cancelable where Callback.Output == Output {
        execute((), callbackOn: queue, callback: callback)
    }
}

/// One execution in flight: enough to end it from outside.
private final class Execution {
    private let end: (Error) -> Void
    private let work: Disposable

    init<Output>(observer: Observer<Output>, work: Disposable) {
        self.end = { observer.send(error: $0) }
        self.work = work
    }

    /// Ends the execution with `error` and cancels its work.
    func fail(_ error: Error) {
        end(error)
        work.dispose()
    }
}

/// The executions in flight, so releasing the command can end them.
private final class ExecutionRegistry {
    private let lock = Lock()
    private var executions: [Int: Execution] = [:]
    private var nextID = 0

    func add(_ execution: Execution) -> Int {
        lock.lock(); defer { lock.unlock() }
        let id = nextID
        nextID += 1
        executions[id] = execution
        return id
    }

    func remove(_ id: Int) {
        let removed: Execution? = {
            lock.lock(); defer { lock.unlock() }
            return executions.removeValue(forKey: id)
        }()
        _ = removed
    }

    func failAll(_ error: Error) {
        let all: [Execution] = {
            lock.lock(); defer { lock.unlock() }
            let all = Array(executions.values)
            executions = [:]
            return all
        }()
        for execution in all { execution.fail(error) }
    }
}

/// Hands the execution started by `execute` to its cancelable.
private final class ExecutionSlot {
    private let lock = Lock()
    private var execution: Execution?

    func set(_ execution: Execution) {
        lock.lock(); defer { lock.unlock() }
        self.execution = execution
    }

    func get() -> Execution? {
        lock.lock(); defer { lock.unlock() }
        return execution
    }
}
