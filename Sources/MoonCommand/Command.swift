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
    /// Made on first use (most commands are never observed).
    public var isExecuting: Property<Bool> { registry.observedCount().isExecuting }
    /// Whether executing now would run (false while executing unless
    /// concurrent execution is allowed). Made on first use.
    public var isEnabled: Property<Bool> { registry.observedCount().isEnabled }

    private let explicitName: String?
    private let executeBlock: ((Input, CommandResult<Output>) -> Cancelable?)?
    /// The executions in flight; they share it, not the command.
    private let registry: ExecutionRegistry<Output>

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
        registry = ExecutionRegistry(allowsConcurrentExecution: allowsConcurrentExecution)
    }

    deinit {
        registry.releaseAll()
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
        Signal({ [weak self] observer, lifetime in
            guard let self else {
                observer.send(error: CommandError.released)
                return
            }
            let execution = SignalExecution(registry: self.registry, observer: observer)
            guard self.registry.admit(execution) else {
                observer.send(error: CommandError.disabled)
                return
            }
            // The subscription's end (disposal or terminal event) ends the
            // execution.
            lifetime.add(execution)
            self.scheduleRun { [weak self] in
                // No command: it was released, which ended the execution.
                guard let self, execution.isActive else { return }
                execution.setWork(self.run(input, result: execution))
            }
        })
    }

    /// Calls `start` (which calls `run`) on the execute scheduler.
    private func scheduleRun(_ start: @escaping () -> Void) {
        if let queue = executeQueue {
            queue.async { start() }
        } else {
            executeScheduler.post(start)
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
        let execution = CallbackExecution(command: self, registry: registry, input: input,
                                          scheduler: scheduler, callback: callback)
        if registry.admit(execution) {
            scheduleRun { execution.start() }
        } else {
            execution.send(.error(CommandError.disabled))
        }
        return execution
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
        execute(input, callbackOn: scheduler) { [weak callback] command, value, error, isCompleted in
            guard let callback else { return }
            if let error {
                callback.onError(command, error: error)
            } else if isCompleted {
                callback.onComplete(command)
            } else if let value {
                callback.onNext(command, value: value)
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
