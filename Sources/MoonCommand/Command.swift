import Dispatch
import Synchronization

/// A unit of work with a result stream: RACCommand and ReactiveSwift's
/// `Action`, for moon.
///
/// Provide the work by subclassing and overriding ``run(_:result:)``, or
/// by passing an `execute` block. It sends values and then one terminal
/// event to a ``CommandSink``; a failure has the command's `Failure` type.
/// Run it in one of three ways:
///
/// 1. `signal(_:)`, a cold ``Signal`` to compose with others: each start
///    is one execution, and disposing the subscription cancels it;
/// 2. `execute(_:callbackOn:_:)` with a closure
///    `(command, value?, error?, isCompleted)`;
/// 3. `execute(_:callbackOn:callback:)` with a ``CommandCallback`` object,
///    held weakly.
///
/// ## Shared streams
/// ``events``, ``values``, ``errors``, ``completed`` and
/// ``disabledErrors`` observe every execution, however it was started,
/// from the moment they are started; they complete when the command is
/// released.
///
/// ## Queues
/// `run` is called on ``executeScheduler``: a serial queue of the
/// command's own by default, the `executeQueue` given, or any scheduler
/// (moon runs its node commands on its event loop). Callbacks of `execute`
/// arrive on the queue (or scheduler) the caller passes. Signal
/// subscribers receive events on whatever thread `run` sends them from;
/// add `deliverOn` to choose.
///
/// ## Enabled, executing, disabled
/// ``isExecuting`` is true while at least one execution is in flight (from
/// its start to its terminal event or cancellation). ``isEnabled`` is the
/// `enabledIf` property's value, and, unless `allowsConcurrentExecution`
/// is true, not executing. Executing a command that is not enabled fails
/// at once with ``CommandError/disabled`` (nothing runs, the running
/// execution is not disturbed, and ``disabledErrors`` sends).
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
open class Command<Input: Sendable, Output: Sendable, Failure: Error>: AnyCommand, @unchecked Sendable {
    // @unchecked: every stored property is an immutable `let` of a Sendable
    // type; the class is open for subclassing, which checked Sendable
    // forbids.

    /// The block form of `run`.
    public typealias Execute = @Sendable (_ input: Input, _ result: CommandSink<Output, Failure>) -> Cancelable?
    /// The closure form of `execute`'s callback.
    public typealias Callback = @Sendable (
        _ command: Command<Input, Output, Failure>, _ value: Output?, _ error: Error?, _ isCompleted: Bool
    ) -> Void

    /// Where `run` executes.
    public let executeScheduler: Scheduler
    /// The queue `run` executes on, unless the command was made with a
    /// scheduler that is not a queue.
    public let executeQueue: DispatchQueue?
    /// Whether a new execution may start while one is running.
    public let allowsConcurrentExecution: Bool
    /// Whether an execution is in flight; current value plus changes.
    public var isExecuting: Property<Bool> { Property(registry.availability) { $0.executing > 0 } }
    /// Whether executing now would run: `enabledIf`, and not executing
    /// unless concurrent execution is allowed.
    public var isEnabled: Property<Bool> {
        let registry = self.registry
        return Property(registry.availability) { registry.isEnabled($0) }
    }

    // The shared streams and properties are views of the registry, made
    // when asked for: a command that nobody observes (a node's, in
    // moon) builds none of them.

    /// Every event of every execution, in order within each execution: its
    /// values, then `completed`, its failure, or ``CommandError/canceled``
    /// (or `released`) when it was cut short.
    public var events: Signal<Event<Output>> { registry.events.signal.compactMap { $0.event } }
    /// The values of every execution.
    public var values: Signal<Output> {
        registry.events.signal.compactMap { if case let .next(value) = $0 { return value } else { return nil } }
    }
    /// The failures `run` sent, of every execution (not cancellations nor
    /// refusals).
    public var errors: Signal<Failure> {
        registry.events.signal.compactMap { if case let .failed(error) = $0 { return error } else { return nil } }
    }
    /// One `()` per execution that completed.
    public var completed: Signal<Void> {
        registry.events.signal.compactMap { if case .completed = $0 { return () } else { return nil } }
    }
    /// One `()` per execution refused because the command was not enabled.
    public var disabledErrors: Signal<Void> {
        registry.events.signal.compactMap { if case .disabled = $0 { return () } else { return nil } }
    }

    private let explicitName: String?
    private let executeBlock: Execute?
    /// The executions in flight and the shared stream; they share it, not
    /// the command.
    private let registry: ExecutionRegistry<Output, Failure>
    /// Keeps `isEnabled` following `enabledIf`.
    private let enabledIfObservation: Disposable?

    /// A command whose work is `execute`, or, without one, its
    /// ``run(_:result:)`` override (subclass and override `run`).
    ///
    /// - Parameters:
    ///   - name: for logs and callbacks; defaults to the type's name.
    ///   - executeQueue: where `run` is called; by default a serial queue
    ///     of the command's own.
    ///   - executeOn: where `run` is called instead of a queue, e.g. an
    ///     event loop's scheduler; takes precedence over `executeQueue`.
    ///   - enabledIf: whether the command may execute (besides not
    ///     executing already); always, by default.
    ///   - allowsConcurrentExecution: whether executions may overlap.
    ///   - execute: called on `executeScheduler` with the input and the
    ///     sink to send to; returns a cancelable for work that continues
    ///     after the block returns (or nil).
    public init(
        name: String? = nil,
        executeQueue: DispatchQueue? = nil,
        executeOn scheduler: Scheduler? = nil,
        enabledIf: Property<Bool>? = nil,
        allowsConcurrentExecution: Bool = false,
        execute: Execute? = nil
    ) {
        explicitName = name
        if let scheduler {
            executeScheduler = scheduler
            self.executeQueue = (scheduler as? QueueScheduler)?.queue
        } else {
            let queue = executeQueue ?? DispatchQueue(label: "moon.command.\(name ?? String(describing: Self.self))")
            executeScheduler = QueueScheduler(queue: queue)
            self.executeQueue = queue
        }
        self.allowsConcurrentExecution = allowsConcurrentExecution
        executeBlock = execute
        let registry = ExecutionRegistry<Output, Failure>(
            allowsConcurrentExecution: allowsConcurrentExecution, userEnabled: enabledIf?.value ?? true)
        self.registry = registry
        let availability = registry.availability
        enabledIfObservation = enabledIf?.signal.observe(next: { enabled in
            availability.modify { $0.userEnabled = enabled }
        })
    }

    deinit {
        enabledIfObservation?.dispose()
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
    open func run(_ input: Input, result: CommandSink<Output, Failure>) -> Cancelable? {
        guard let executeBlock else {
            result.interrupt(.notImplemented)
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
            guard let execution = self.registry.admit(observer) else {
                observer.send(error: CommandError.disabled)
                return
            }
            // The subscription's end (disposal or terminal event) ends the
            // execution.
            lifetime.add(execution)
            self.executeScheduler.post { [weak self] in
                // No command: it was released, which ended the execution.
                guard let self, execution.isActive else { return }
                execution.setWork(self.run(input, result: execution))
            }
        })
    }

    // MARK: Execute with callbacks

    /// Executes once; `callback` receives `(command, value, nil, false)`
    /// for each value, then `(command, nil, nil, true)` on completion or
    /// `(command, nil, error, true)` on failure, on `queue`.
    ///
    /// - Returns: cancels the execution; the callback then receives
    ///   ``CommandError/canceled`` (unless the execution already ended).
    @discardableResult
    public func execute(_ input: Input, callbackOn queue: DispatchQueue, _ callback: @escaping Callback) -> Cancelable {
        execute(input, callbackOn: QueueScheduler(queue: queue), callback)
    }

    /// Like `execute(_:callbackOn:_:)` with a queue, delivering on any
    /// scheduler (a ``TestScheduler`` in tests).
    @discardableResult
    public func execute(_ input: Input, callbackOn scheduler: Scheduler, _ callback: @escaping Callback) -> Cancelable {
        let execution = signal(input)
        let handle = ExecutionHandle<Output>()
        let cancelable = Signal<Output>({ observer, lifetime in
            let child = lifetime.makeChild()
            handle.attach(gate: observer, execution: child)
            execution.start(observer, in: child)
        })
        _ = cancelable.deliverOn(scheduler).start { [weak self] event in
            // No command, no callbacks: it was released.
            guard let self else { return }
            switch event {
            case let .next(value): callback(self, value, nil, false)
            case let .error(error): callback(self, nil, error, true)
            case .completed: callback(self, nil, nil, true)
            }
        }
        return handle
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
    public func execute(callbackOn queue: DispatchQueue, _ callback: @escaping Callback) -> Cancelable {
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

/// What `execute` returns: canceling sends ``CommandError/canceled``
/// through the gate of the callbacks' subscription, after the events
/// already sent, and that terminal event disposes the execution. It is
/// disposed once the execution has ended, however it ended.
private final class ExecutionHandle<Output: Sendable>: Cancelable {
    private let parts = Mutex<(gate: Observer<Output>, execution: Disposable)?>(nil)

    func attach(gate: Observer<Output>, execution: Disposable) {
        parts.withLock { $0 = (gate, execution) }
    }

    var isDisposed: Bool { parts.withLock { $0?.execution.isDisposed ?? false } }

    func dispose() {
        parts.withLock { $0?.gate }?.send(error: CommandError.canceled)
    }
}

/// A command whose failures are any error: the form of commands written
/// before failures were typed.
public typealias CommandResult<Output: Sendable> = CommandSink<Output, any Error>
