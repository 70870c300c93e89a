extension Signal {
    /// Maps each value to a signal and forwards the values of those inner
    /// signals, running at most `maxConcurrent` of them at once; the others
    /// wait in first-in first-out order.
    ///
    /// This is a queue of width `maxConcurrent`: `1` concatenates, `.max`
    /// merges. An inner signal counts against the width from its start to
    /// its terminal event. Completes when the outer signal and every inner
    /// one have completed; fails on the first error.
    public func flatMap<U>(maxConcurrent: Int = .max, _ transform: @escaping (Value) -> Signal<U>) -> Signal<U> {
        precondition(maxConcurrent > 0, "flatMap needs a width of at least 1")
        let upstream = self
        return Signal<U>(serialized: { sink, lifetime in
            let state = FlatMapState<U>()

            func finishIfDone() {
                let done: Bool = {
                    state.lock.lock(); defer { state.lock.unlock() }
                    return state.outerCompleted && state.active == 0 && state.pending.isEmpty
                }()
                if done { sink.send(.completed) }
            }

            // Starts waiting signals while there is room. A trampoline: inner
            // signals that finish synchronously re-enter through `again`
            // instead of recursing.
            func startPending() {
                do {
                    state.lock.lock(); defer { state.lock.unlock() }
                    if state.looping { state.again = true; return }
                    state.looping = true
                }
                while true {
                    let next: Signal<U>? = {
                        state.lock.lock(); defer { state.lock.unlock() }
                        state.again = false
                        guard state.active < maxConcurrent, let next = state.pending.popFirst() else { return nil }
                        state.active += 1
                        return next
                    }()
                    if let next {
                        next.start(Observer { event in
                            if case .completed = event {
                                do {
                                    state.lock.lock(); defer { state.lock.unlock() }
                                    state.active -= 1
                                }
                                startPending()
                                finishIfDone()
                            } else {
                                sink.send(event)
                            }
                        }, in: lifetime.makeChild())
                        continue
                    }
                    state.lock.lock(); defer { state.lock.unlock() }
                    if !state.again { state.looping = false; return }
                }
            }

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let inner = transform(value)
                    do {
                        state.lock.lock(); defer { state.lock.unlock() }
                        state.pending.append(inner)
                    }
                    startPending()
                case let .error(error):
                    sink.send(.error(error))
                case .completed:
                    do {
                        state.lock.lock(); defer { state.lock.unlock() }
                        state.outerCompleted = true
                    }
                    finishIfDone()
                }
            }, in: lifetime.makeChild())
        })
    }
}

private final class FlatMapState<U> {
    let lock = Lock()
    var pending = FIFO<Signal<U>>()
    var active = 0
    var outerCompleted = false
    var looping = false
    var again = false
}

/// An array-backed first-in first-out queue with O(1) amortised pops.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    init() {}

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.count < 1024)
            head = 0
        } else if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }

    /// The elements in order, without removing them.
    var elements: ArraySlice<Element> { storage[head...] }
}
