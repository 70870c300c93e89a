import Synchronization
extension Signal {
    /// Combines the latest value of every signal into an array, in the
    /// order of `signals`.
    ///
    /// Sends once every signal has sent at least one value, then on every
    /// new value. Completes when every signal has completed (a signal that
    /// completes without a value means no combination is ever sent, but the
    /// others still run to their end: they may be work a graph needs).
    /// Fails on the first error, disposing the others. With no signals, it
    /// sends `[]` and completes.
    ///
    /// Each inner event costs O(1) plus, once all values are present, one
    /// copy of the array it sends; starting 10,000 signals is linear.
    public static func combineLatest(_ signals: [Signal<Value>]) -> Signal<[Value]> {
        Signal<[Value]>(serialized: { sink, lifetime in
            if signals.isEmpty {
                sink.send(.next([]))
                sink.send(.completed)
                return
            }
            let state = Mutex(CombineState<Value>(count: signals.count))
            for (index, signal) in signals.enumerated() {
                if lifetime.isDisposed { return }
                signal.start(Observer { event in
                    switch event {
                    case let .next(value):
                        sink.modify { enqueue in
                            if let combined = state.withLock({ $0.receive(value, at: index) }) { enqueue(.next(combined)) }
                        }
                    case let .error(error):
                        sink.send(.error(error))
                    case .completed:
                        sink.modify { enqueue in
                            if state.withLock({ $0.complete() }) { enqueue(.completed) }
                        }
                    }
                }, in: lifetime.makeChild())
            }
        })
    }

    /// Combines the latest values of `signals` and reduces them to one
    /// value (see ``combineLatest(_:)-swift.type.method``).
    public static func combineLatest<R: Sendable>(_ signals: [Signal<Value>], reduce: @escaping @Sendable ([Value]) -> R) -> Signal<R> {
        combineLatest(signals).map(reduce)
    }

    /// Combines the latest values of this signal and `other` into pairs.
    public func combineLatest<U: Sendable>(with other: Signal<U>) -> Signal<(Value, U)> {
        let left = self.map { Either<Value, U>.left($0) }
        let right = other.map { Either<Value, U>.right($0) }
        return Signal<Either<Value, U>>.combineLatest([left, right]).map { pair in
            guard case let .left(a) = pair[0], case let .right(b) = pair[1] else {
                preconditionFailure("combineLatest(with:) keeps its inputs in order")
            }
            return (a, b)
        }
    }
}

/// The latest values of a ``Signal/combineLatest(_:)`` subscription.
private struct CombineState<Value> {
    /// Until every signal has sent: the values so far.
    var latest: [Value?]
    /// From then on: the dense array that is sent.
    var combined: [Value] = []
    var missing: Int
    var active: Int

    init(count: Int) {
        latest = Array(repeating: nil, count: count)
        missing = count
        active = count
    }

    /// Records a value; returns the combination to send, if any.
    mutating func receive(_ value: Value, at index: Int) -> [Value]? {
        guard missing > 0 else {
            combined[index] = value
            return combined
        }
        if latest[index] == nil { missing -= 1 }
        latest[index] = value
        guard missing == 0 else { return nil }
        combined = latest.map { $0! }
        latest = []
        return combined
    }

    /// Records a completion; true when every signal has completed.
    mutating func complete() -> Bool {
        active -= 1
        return active == 0
    }
}

/// One of two types; lets the pairwise combinators reuse the n-ary ones.
enum Either<A: Sendable, B: Sendable>: Sendable {
    case left(A)
    case right(B)
}
