/// A read-only value that changes over time: its current value plus a
/// signal of it.
///
/// `signal` sends the current value on start, then every change, and
/// completes when the property is released.
public final class Property<Value> {
    private let getter: () -> Value
    /// The current value, then every change.
    public let signal: Signal<Value>
    private let retained: AnyObject?

    /// A read-only view of `source`.
    public init(_ source: MutableProperty<Value>) {
        getter = { source.value }
        signal = source.signal
        retained = source
    }

    /// A read-only view of `source`, transformed. Repeated equal values
    /// are not sent.
    public init<S>(_ source: MutableProperty<S>, map transform: @escaping (S) -> Value) where Value: Equatable {
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
public final class MutableProperty<Value> {
    private let lock = Lock()
    // Protected by `lock`.
    private var current: Value
    private var subscribers: [Int: SerialSink<Value>] = [:]
    private var nextID = 0
    private let box = WeakBox<MutableProperty<Value>>()

    /// A property holding `initial`.
    public init(_ initial: Value) {
        current = initial
        box.value = self
    }

    deinit {
        let sinks = Array(subscribers.values)
        for sink in sinks { sink.enqueue(.completed) }
        for sink in sinks { sink.drain() }
    }

    /// The current value. Setting it notifies observers.
    public var value: Value {
        get {
            lock.lock(); defer { lock.unlock() }
            return current
        }
        set { modify { $0 = newValue } }
    }

    /// Changes the value in place, atomically, and notifies observers.
    /// `body` runs under the property's lock: it must not call out.
    @discardableResult
    public func modify<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        let (result, sinks): (R, [SerialSink<Value>]) = try {
            lock.lock(); defer { lock.unlock() }
            let result = try body(&current)
            let sinks = Array(subscribers.values)
            for sink in sinks { sink.enqueue(.next(current)) }
            return (result, sinks)
        }()
        for sink in sinks { sink.drain() }
        return result
    }

    /// The current value, then every change; completes when the property
    /// is released. Does not keep the property alive.
    public var signal: Signal<Value> {
        let box = self.box
        return Signal(unchecked: { observer, lifetime in
            let sink = SerialSink(observer, lifetime: lifetime)
            lifetime.add(sink)
            guard let property = box.value else {
                sink.send(.completed)
                return
            }
            let id = property.add(sink)
            lifetime.add { [weak box] in box?.value?.remove(id) }
        })
    }

    private func add(_ sink: SerialSink<Value>) -> Int {
        let id: Int = {
            lock.lock(); defer { lock.unlock() }
            let id = nextID
            nextID += 1
            subscribers[id] = sink
            sink.enqueue(.next(current))
            return id
        }()
        sink.drain()
        return id
    }

    private func remove(_ id: Int) {
        let removed: SerialSink<Value>? = {
            lock.lock(); defer { lock.unlock() }
            return subscribers.removeValue(forKey: id)
        }()
        _ = removed
    }
}

/// A weak reference, so signals of a property do not keep it alive.
final class WeakBox<T: AnyObject> {
    private let lock = Lock()
    private weak var stored: T?

    var value: T? {
        get {
            lock.lock(); defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock(); defer { lock.unlock() }
            stored = newValue
        }
    }
}
