import Synchronization
extension Signal {
    /// A shared signal: the upstream starts at most once, on the first
    /// subscription, and every subscriber (early or late) receives the
    /// values so far (the last `capacity` of them) and then the live ones,
    /// and the terminal event.
    ///
    /// This is how a graph runs each upstream once, however many nodes
    /// need it: hold on to the returned signal and start it once per
    /// dependent.
    ///
    /// Cancellation is reference-counted: when every subscriber has
    /// disposed before the upstream ended, the upstream is disposed (its
    /// work canceled), and later subscribers receive
    /// ``SignalError/canceled``, since the work is never restarted.
    ///
    /// Call `replay` once and share the result: each call creates a new
    /// shared state.
    public func replay(upTo capacity: Int = .max) -> Signal<Value> {
        let core = ReplayCore(upstream: self, capacity: max(0, capacity))
        return Signal(unchecked: { observer, lifetime in
            core.subscribe(observer, lifetime: lifetime)
        })
    }
}

/// The shared state of a ``Signal/replay(upTo:)``.
///
/// Every subscriber has its own ``SerialSink``. Events are enqueued into
/// the sinks under the core's lock, so each subscriber sees the same order
/// (buffer first, then live), and drained after it is released.
final class ReplayCore<Value: Sendable>: Sendable {
    private enum Phase {
        case idle
        case running
        case ended(Event<Value>)
        case canceled
    }

    private struct State {
        var phase: Phase = .idle
        var buffer = FIFO<Value>()
        var subscribers: [Int: SerialSink<Value>] = [:]
        var nextID = 0
        var upstreamLifetime: Disposable?
    }

    private let upstream: Signal<Value>
    private let capacity: Int
    private let state = Mutex(State())

    init(upstream: Signal<Value>, capacity: Int) {
        self.upstream = upstream
        self.capacity = capacity
    }

    func subscribe(_ observer: Observer<Value>, lifetime: CompositeDisposable) {
        let sink = SerialSink(observer, lifetime: lifetime)
        lifetime.add(sink)
        let (id, shouldStart) = state.withLock { state -> (Int?, Bool) in
            for value in state.buffer.elements { sink.enqueue(.next(value)) }
            switch state.phase {
            case let .ended(terminal):
                sink.enqueue(terminal)
                return (nil, false)
            case .canceled:
                sink.enqueue(.error(SignalError.canceled))
                return (nil, false)
            case .idle, .running:
                let id = state.nextID
                state.nextID += 1
                state.subscribers[id] = sink
                if case .idle = state.phase {
                    state.phase = .running
                    return (id, true)
                }
                return (id, false)
            }
        }
        sink.drain()
        if let id {
            lifetime.add { [weak self] in self?.unsubscribe(id) }
        }
        if shouldStart {
            let upstreamLifetime = upstream.start(Observer { [weak self] event in self?.receive(event) })
            let cancelNow = state.withLock { state -> Bool in
                if case .canceled = state.phase { return true }
                if case .running = state.phase { state.upstreamLifetime = upstreamLifetime }
                return false
            }
            if cancelNow { upstreamLifetime.dispose() }
        }
    }

    private func receive(_ event: Event<Value>) {
        let capacity = self.capacity
        let sinks = state.withLock { state -> [SerialSink<Value>] in
            guard case .running = state.phase else { return [] }
            switch event {
            case let .next(value):
                if capacity > 0 {
                    state.buffer.append(value)
                    if state.buffer.count > capacity { _ = state.buffer.popFirst() }
                }
            case .error, .completed:
                state.phase = .ended(event)
                state.upstreamLifetime = nil
            }
            let sinks = Array(state.subscribers.values)
            for sink in sinks { sink.enqueue(event) }
            if event.isTerminal { state.subscribers = [:] }
            return sinks
        }
        for sink in sinks { sink.drain() }
    }

    private func unsubscribe(_ id: Int) {
        let cancel = state.withLock { state -> Disposable? in
            guard state.subscribers.removeValue(forKey: id) != nil, state.subscribers.isEmpty,
                  case .running = state.phase else { return nil }
            state.phase = .canceled
            state.buffer.removeAll()
            defer { state.upstreamLifetime = nil }
            return state.upstreamLifetime
        }
        cancel?.dispose()
    }
}
