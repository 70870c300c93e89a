import Synchronization
/// The gate where events enter a signal chain: it enforces the event
/// grammar and serial delivery without ever calling the observer while a
/// lock is held.
///
/// Senders enqueue under the lock. Whoever finds nobody delivering becomes
/// the drainer and delivers, one event at a time, outside the lock, until
/// the queue is empty. A sender that arrives while another thread (or a
/// re-entrant call from the observer itself) is draining just enqueues and
/// returns, so delivery is serial and never recursive, and an observer may
/// send back into its own signal without deadlocking.
///
/// Operators whose state changes together with what they emit (combine,
/// merge, flatMap...) use ``modify(_:)`` so that the state change and the
/// enqueueing happen under one lock, which keeps emitted events in the
/// order the state changed.
final class SerialSink<Value: Sendable>: Disposable {
    private struct State {
        var queue: [Event<Value>] = []
        var head = 0
        var draining = false
        /// False after a terminal event or disposal.
        var accepting = true
        var disposed = false
        var observer: Observer<Value>?
        /// Disposed after the terminal event has been delivered.
        var lifetime: Disposable?

        /// Appends `event` if the grammar allows it.
        mutating func accept(_ event: Event<Value>) {
            guard accepting else { return }
            if event.isTerminal { accepting = false }
            queue.append(event)
        }

        /// The observer and lifetime, taken so they are released (and the
        /// lifetime disposed) outside the lock.
        mutating func takeObserver() -> (Observer<Value>?, Disposable?) {
            defer { observer = nil; lifetime = nil }
            return (observer, lifetime)
        }
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - observer: the downstream observer.
    ///   - lifetime: disposed after the terminal event has been delivered,
    ///     so upstream resources are released when the signal ends.
    init(_ observer: Observer<Value>, lifetime: Disposable?) {
        state = Mutex(State(observer: observer, lifetime: lifetime))
    }

    /// The observer senders use.
    var input: Observer<Value> { Observer(self.send) }

    var isDisposed: Bool { state.withLock { $0.disposed } }

    /// Whether a terminal event was accepted or the sink was disposed.
    var isClosed: Bool { state.withLock { !$0.accepting } }

    /// Enqueues `event` (if the grammar allows it) and delivers.
    func send(_ event: Event<Value>) {
        // The sender that becomes the drainer takes the observer in the
        // same critical section: one lock round per event on the fast path.
        let deliverTo = state.withLock { state -> Observer<Value>?? in
            guard state.accepting else { return nil }
            if event.isTerminal { state.accepting = false }
            if state.draining {
                state.queue.append(event)
                return nil
            }
            state.draining = true
            return .some(state.observer)
        }
        guard let deliverTo else { return }
        deliver(event, to: deliverTo)
        drainLoop()
    }

    /// Runs `body` under the sink's lock; the events it passes to `enqueue`
    /// are queued atomically with whatever state `body` changed, then
    /// delivered after the lock is released. `body` must not call out.
    func modify<R>(_ body: (_ enqueue: (Event<Value>) -> Void) -> R) -> R {
        let result = state.withLock { state in body { state.accept($0) } }
        drain()
        return result
    }

    /// Enqueues without delivering; the caller holds another lock and must
    /// call ``drain()`` after releasing it. Multicasting (broadcasts,
    /// properties, replay) uses it to keep every subscriber's order equal
    /// to the source's.
    func enqueue(_ event: Event<Value>) {
        state.withLock { $0.accept(event) }
    }

    /// Delivers queued events unless another thread is already doing it.
    func drain() {
        let start = state.withLock { state -> Bool in
            if state.draining || state.head == state.queue.count { return false }
            state.draining = true
            return true
        }
        if start { drainLoop() }
    }

    private func drainLoop() {
        while true {
            var released: (Observer<Value>?, Disposable?) = (nil, nil)
            let next = state.withLock { state -> (Event<Value>, Observer<Value>?)? in
                if state.disposed || state.head == state.queue.count {
                    state.queue.removeAll(keepingCapacity: !state.disposed)
                    state.head = 0
                    state.draining = false
                    // `dispose` leaves a drainer's observer to the drainer.
                    if state.disposed { released = state.takeObserver() }
                    return nil
                }
                state.head += 1
                return (state.queue[state.head - 1], state.observer)
            }
            guard let (event, observer) = next else {
                _ = released // released outside the lock: deinits may run
                return
            }
            deliver(event, to: observer)
        }
    }

    private func deliver(_ event: Event<Value>, to observer: Observer<Value>?) {
        observer?.send(event)
        guard event.isTerminal else { return }
        // The terminal event is delivered: release the observer, close the
        // sink, and tear down upstream resources.
        let (_, lifetime) = state.withLock { state -> (Observer<Value>?, Disposable?) in
            state.disposed = true
            state.accepting = false
            state.queue.removeAll()
            state.head = 0
            return state.takeObserver()
        }
        lifetime?.dispose()
    }

    func dispose() {
        let released = state.withLock { state -> (Observer<Value>?, Disposable?) in
            if state.disposed { return (nil, nil) }
            state.disposed = true
            state.accepting = false
            state.queue.removeAll()
            state.head = 0
            // The drainer releases the observer itself when it notices.
            return state.draining ? (nil, nil) : state.takeObserver()
        }
        // Released outside the lock: deinits may run. The lifetime is not
        // disposed here: disposal comes from it (or from a terminal event).
        _ = released
    }
}
