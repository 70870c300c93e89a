import Synchronization
/// A read-only value that changes over time: its current value plus a
/// signal of it.
///
/// `signal` sends the current value on start, then every change, and
/// completes when the property's source is released.
public final class Property<Value: Sendable>: Sendable {
    private let getter: @Sendable () -> Value
    /// The current value, then every change.
    public let signal: Signal<Value>
    /// The source, kept alive as long as this view.
    private let retained: (any Sendable)?

    /// A read-only view of `source`.
    public init(_ source: MutableProperty<Value>) {
        getter = { source.value }
        signal = source.signal
        retained = source
    }

    /// A read-only view of `source`, transformed. Repeated equal values
    /// are not sent.
    public init<S>(_ source: MutableProperty<S>, map transform: @escaping @Sendable (S) -> Value) where Value: Equatable {
        getter = { transform(source.value) }
        signal = source.signal.map(transform).skipRepeats()
        retained = source
    }

    /// A property that never changes.
    public init(value: Value) {
        getter = { value }
        signal = .just(value)
        retained = nil
    }

    /// The current value.
    public var value: Value { getter() }
}

/// A thread-safe value that can be observed: ``value`` reads and writes
/// it, ``signal`` sends the current value and then every change.
///
/// Observers see changes in the order they were made, even when several
/// threads write at once (changes are enqueued under the property's lock
/// and delivered after it is released).
public final class MutableProperty<Value: Sendable>: Sendable {
    /// The value under its lock, in a box of its own: `signal`'s
    /// subscriptions share it without keeping the property alive.
    private final class Current: Sendable {
        let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
    }
    private let current: Current
    private let changes = Broadcast<Value>()

    /// A property holding `initial`.
    public init(_ initial: Value) {
        current = Current(initial)
    }

    deinit {
        changes.finish()
    }

    /// The current value. Setting it notifies observers.
    public var value: Value {
        get { current.mutex.withLock { $0 } }
        set { modify { $0 = newValue } }
    }

    /// Changes the value in place, atomically, and notifies observers.
    /// `body` runs under the property's lock: it must not call out.
    @discardableResult
    public func modify<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        let (result, sinks) = try current.mutex.withLock { value in
            let result = try body(&value)
            return (result, changes.enqueue(.next(value)))
        }
        sinks?.forEach { $0.drain() }
        return result
    }

    /// The current value, then every change; completes when the property
    /// is released. Does not keep the property alive.
    public var signal: Signal<Value> {
        let current = self.current, changes = self.changes
        return Signal(unchecked: { observer, lifetime in
            let sink = SerialSink(observer, lifetime: lifetime)
            let id = current.mutex.withLock { changes.add(sink, first: $0) }
            changes.attach(sink, to: lifetime, id: id)
        })
    }
}
