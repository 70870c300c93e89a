import Synchronization
/// A hot stream: every event sent goes to the subscribers present at that
/// moment, each through its own ``SerialSink``. It backs a property's
/// changes and a command's shared streams (`values`, `errors`...).
///
/// Senders enqueue into every sink under the broadcast's lock and drain
/// after releasing it, so all subscribers see events in the order they
/// were sent. Ending it (``finish()``) completes every subscriber, and
/// later ones at once.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var subscribers: [Int: SerialSink<Value>] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    init() {}

    /// Sends `event` to every current subscriber.
    func send(_ event: Event<Value>) {
        enqueue(event)?.forEach { $0.drain() }
    }

    /// Enqueues `event` for every current subscriber; the caller drains the
    /// sinks returned once it holds no lock. For a sender that must order
    /// this event with its own state change under its own lock.
    func enqueue(_ event: Event<Value>) -> [SerialSink<Value>]? {
        state.withLock { state in
            // Nobody observes (the usual case of a command's shared
            // streams): nothing to copy, nothing to drain.
            guard !state.finished, !state.subscribers.isEmpty else { return nil }
            let sinks = Array(state.subscribers.values)
            for sink in sinks { sink.enqueue(event) }
            return sinks
        }
    }

    /// Completes every subscriber; later subscribers complete at once.
    func finish() {
        let sinks = state.withLock { state -> [SerialSink<Value>] in
            if state.finished { return [] }
            state.finished = true
            defer { state.subscribers = [:] }
            // A loop, not `Array(_:)`: unspecialised, that asks the runtime
            // for the collection's associated types, a conformance scan.
            var sinks: [SerialSink<Value>] = []
            sinks.reserveCapacity(state.subscribers.count)
            for (_, sink) in state.subscribers { sinks.append(sink) }
            return sinks
        }
        for sink in sinks { sink.enqueue(.completed) }
        for sink in sinks { sink.drain() }
    }

    /// The events sent from the moment of the start on. Holds the
    /// broadcast, not its owner.
    var signal: Signal<Value> {
        Signal(unchecked: { observer, lifetime in
            let sink = SerialSink(observer, lifetime: lifetime)
            self.attach(sink, to: lifetime, id: self.add(sink))
        })
    }

    /// Adds `sink` as a subscriber, first enqueueing `first` for it: a
    /// caller that holds the lock of the value it sends first (a property)
    /// gets no event in between. Nil when the broadcast has finished.
    func add(_ sink: SerialSink<Value>, first: Value? = nil) -> Int? {
        state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = sink
            if let first { sink.enqueue(.next(first)) }
            return id
        }
    }

    /// Ties a subscriber added with ``add(_:first:)`` (nil: too late) to
    /// its subscription's lifetime and delivers what is queued for it.
    /// Called with no lock held.
    func attach(_ sink: SerialSink<Value>, to lifetime: CompositeDisposable, id: Int?) {
        lifetime.add(sink)
        if let id {
            lifetime.add { self.remove(id) }
            sink.drain()
        } else {
            sink.send(.completed)
        }
    }

    private func remove(_ id: Int) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
        _ = removed // released outside the lock: a deinit may run
    }
}
