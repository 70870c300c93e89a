/// A cold stream of events: each `start` runs the work anew.
///
/// ## The event contract
///
/// Every subscription observes events following the grammar
///
///     next* (error | completed)?
///
/// - **Serial**: events reach an observer one at a time, never
///   concurrently, even when the producer sends from many threads.
/// - **Never recursive**: an observer that makes its own signal send again
///   (directly or through other operators) does not re-enter itself; the
///   new event is queued and delivered after the current one returns.
/// - **Nothing after a terminal event**: once `error` or `completed` is
///   delivered, further sends are ignored, the observer is released and the
///   subscription's disposable is disposed (releasing upstream resources).
/// - **Disposal**: after `dispose()` no new event is delivered. An event
///   already being delivered on another thread may finish.
/// - **No locks held during delivery**: MoonCommand never calls an observer
///   while holding one of its locks.
///
/// Signals are *cold*: `start` calls the start handler again, so each
/// subscriber gets its own run of the work. This is what makes ``retry``
/// possible. Use ``replay(upTo:)`` to run an upstream once for many
/// subscribers.
///
/// The contract is enforced where events enter a chain (``init(_:)``) and
/// by every operator that combines sources or threads; operators that
/// only transform a serial stream (`map`, `filter`) add no lock of their
/// own.
///
/// Values are `Sendable`: a signal's events may cross threads at any
/// operator (`deliverOn`, a command's execute queue).
public struct Signal<Value: Sendable>: Sendable {
    /// Starts the work, sending to an observer that already obeys the
    /// contract, and registering teardown on the lifetime.
    let startHandler: @Sendable (Observer<Value>, CompositeDisposable) -> Void

    /// Creates a signal from a start handler.
    ///
    /// The handler runs once per `start`. It may send from any thread, at
    /// any time; the observer it receives serialises the events, drops any
    /// that break the grammar and ignores everything after disposal. It
    /// should register its teardown (cancelling timers, killing processes)
    /// on the `lifetime`, which is disposed when the subscriber disposes or
    /// when the signal terminates.
    public init(_ startHandler: @escaping @Sendable (_ observer: Observer<Value>, _ lifetime: CompositeDisposable) -> Void) {
        self.startHandler = { downstream, lifetime in
            let sink = SerialSink(downstream, lifetime: lifetime)
            lifetime.add(sink)
            startHandler(sink.input, lifetime)
        }
    }

    /// Creates a signal whose handler receives the serialising sink itself,
    /// for operators that must change state and emit under one lock.
    init(serialized startHandler: @escaping @Sendable (_ sink: SerialSink<Value>, _ lifetime: CompositeDisposable) -> Void) {
        self.startHandler = { downstream, lifetime in
            let sink = SerialSink(downstream, lifetime: lifetime)
            lifetime.add(sink)
            startHandler(sink, lifetime)
        }
    }

    /// Creates a signal from a handler that already obeys the contract
    /// (it forwards a serial upstream). Adds no lock.
    init(unchecked startHandler: @escaping @Sendable (Observer<Value>, CompositeDisposable) -> Void) {
        self.startHandler = startHandler
    }

    /// Starts the work and delivers its events to `observer`.
    ///
    /// - Returns: a disposable that stops the work and the delivery.
    @discardableResult
    public func start(_ observer: Observer<Value>) -> Disposable {
        let lifetime = CompositeDisposable()
        startHandler(observer, lifetime)
        return lifetime
    }

    /// Starts the work, delivering every event to `action`.
    @discardableResult
    public func start(_ action: @escaping @Sendable (Event<Value>) -> Void) -> Disposable {
        start(Observer(action))
    }

    /// Starts the work with one optional closure per kind of event.
    @discardableResult
    public func observe(
        next: (@Sendable (Value) -> Void)? = nil,
        error: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        start(Observer(next: next, error: error, completed: completed))
    }

    /// Starts the work inside a lifetime owned by the caller (an operator
    /// starting an inner signal). The events bypass any extra gate.
    func start(_ observer: Observer<Value>, in lifetime: CompositeDisposable) {
        startHandler(observer, lifetime)
    }
}

// MARK: - Factories

extension Signal {
    /// A signal that sends `value` and completes.
    public static func just(_ value: Value) -> Signal<Value> {
        Signal({ observer, _ in
            observer.send(next: value)
            observer.sendCompleted()
        })
    }

    /// A signal that sends each of `values` and completes.
    public init<S: Sequence & Sendable>(values: S) where S.Element == Value {
        self.init({ observer, lifetime in
            for value in values {
                if lifetime.isDisposed { return }
                observer.send(next: value)
            }
            observer.sendCompleted()
        })
    }

    /// A signal that fails at once with `error`.
    public static func error(_ error: Error) -> Signal<Value> {
        Signal({ observer, _ in observer.send(error: error) })
    }

    /// A signal that completes at once, sending nothing.
    public static var empty: Signal<Value> {
        Signal({ observer, _ in observer.sendCompleted() })
    }

    /// A signal that never sends anything.
    public static var never: Signal<Value> {
        Signal({ _, _ in })
    }

    /// A signal that runs `body` on each start and sends its result (or
    /// its thrown error).
    public static func attempt(_ body: @escaping @Sendable () throws -> Value) -> Signal<Value> {
        Signal({ observer, _ in
            do {
                let value = try body()
                observer.send(next: value)
                observer.sendCompleted()
            } catch {
                observer.send(error: error)
            }
        })
    }
}
