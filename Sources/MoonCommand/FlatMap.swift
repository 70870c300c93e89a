import Synchronization
extension Signal {
    /// Maps each value to a signal and forwards the values of those inner
    /// signals, running at most `maxConcurrent` of them at once; the others
    /// wait in first-in first-out order.
    ///
    /// This is a queue of width `maxConcurrent`: `1` concatenates, `.max`
    /// merges. An inner signal counts against the width from its start to
    /// its terminal event. Completes when the outer signal and every inner
    /// one have completed; fails on the first error.
    public func flatMap<U: Sendable>(maxConcurrent: Int = .max, _ transform: @escaping @Sendable (Value) -> Signal<U>) -> Signal<U> {
        precondition(maxConcurrent > 0, "flatMap needs a width of at least 1")
        let upstream = self
        return Signal<U>(serialized: { sink, lifetime in
            let state = Mutex(FlatMapState<U>())

            @Sendable func finishIfDone() {
                if state.withLock({ $0.outerCompleted && $0.active == 0 && $0.pending.isEmpty }) {
                    sink.send(.completed)
                }
            }

            // Starts waiting signals while there is room. Inner signals that
            // finish synchronously re-enter through the trampoline instead
            // of recursing.
            @Sendable func startPending() {
                guard state.withLock({ $0.trampoline.enter() }) else { return }
                repeat {
                    while let next = state.withLock({ $0.takeNext(maxConcurrent: maxConcurrent) }) {
                        next.start(Observer { event in
                            guard case .completed = event else {
                                sink.send(event)
                                return
                            }
                            state.withLock { $0.active -= 1 }
                            startPending()
                            finishIfDone()
                        }, in: lifetime.makeChild())
                    }
                } while state.withLock({ $0.trampoline.loopAgain() })
            }

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let inner = transform(value)
                    state.withLock { $0.pending.append(inner) }
                    startPending()
                case let .error(error):
                    sink.send(.error(error))
                case .completed:
                    state.withLock { $0.outerCompleted = true }
                    finishIfDone()
                }
            }, in: lifetime.makeChild())
        })
    }
}

private struct FlatMapState<U: Sendable> {
    var pending = FIFO<Signal<U>>()
    var active = 0
    var outerCompleted = false
    var trampoline = Trampoline()

    /// The next waiting signal if there is room, counted as active.
    mutating func takeNext(maxConcurrent: Int) -> Signal<U>? {
        guard active < maxConcurrent, let next = pending.popFirst() else { return nil }
        active += 1
        return next
    }
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
