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
final class ReplayCore<Value> {
    private enum State {
        case idle
        case running
        case ended(Event<Value>)
        case canceled
    }

    private let lock = Lock()
    private let upstream: Signal<Value>
    private let capacity: Int
    // Protected by `lock`.
    private var state: State = .idle
    private var buffer = FIFO<Value>()
    private var subscribers: [Int: SerialSink<Value>] = [:]
    private var nextID = 0
    private var upstreamLifetime: Disposable?

    init(upstream: Signal<Value>, capacity: Int) {
        self.upstream = upstream
        self.capacity = capacity
    }

    func subscribe(_ observer: Observer<Value>, lifetime: CompositeDisposable) {
        let sink = SerialSink(observer, lifetime: lifetime)
        lifetime.add(sink)
        let (id, shouldStart): (Int?, Bool) = {
            lock.lock(); defer { lock.unlock() }
            for value in buffer.elements { sink.enqueue(.next(value)) }
            switch state {
            case let .ended(terminal):
                sink.enqueue(terminal)
                return (nil, false)
            case .canceled:
                sink.enqueue(.error(SignalError.canceled))
                return (nil, false)
            case .idle, .running:
                let id = nextID
                nextID += 1
                subscribers[id] = sink
                if case .idle = state {
                    state = .running
                    return (id, true)
                }
                return (id, false)
            }
        }()
        sink.drain()
        if let id {
            lifetime.add { [weak self] in self?.unsubscribe(id) }
        }
        if shouldStart {
            let upstreamLifetime = upstream.start(Observer { [weak self] event in self?.receive(event) })
            let cancelNow: Bool = {
                lock.lock(); defer { lock.unlock() }
                if case .canceled = state { return true }
                if case .running = state { self.upstreamLifetime = upstreamLifetime }
                return false
            }()
            if cancelNow { upstreamLifetime.dispose() }
        }
    }

    private func receive(_ event: Event<Value>) {
        let sinks: [SerialSink<Value>] = {
            lock.lock(); defer { lock.unlock() }
            guard case .running = state else { return [] }
            switch event {
            case let .next(value):
                if capacity > 0 {
                    buffer.append(value)
                    if buffer.count > capacity { _ = buffer.popFirst() }
                }
            case .error, .completed:
                state = .ended(event)
                upstreamLifetime = nil
            }
            let sinks = Array(subscribers.values)
            for sink in sinks { sink.enqueue(event) }
            if event.isTerminal { subscribers = [:] }
            return sinks
        }()
        for sink in sinks { sink.drain() }
    }

    private func unsubscribe(_ id: Int) {
        let cancel: Disposable? = {
            lock.lock(); defer { lock.unlock() }
            guard subscribers.removeValue(forKey: id) != nil, subscribers.isEmpty,
                  case .running = state else { return nil }
            state = .canceled
            buffer.removeAll()
            let cancel = upstreamLifetime
            upstreamLifetime = nil
            return cancel
        }()
        cancel?.dispose()
    }
}
