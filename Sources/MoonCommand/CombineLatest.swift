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
            let count = signals.count
            if count == 0 {
                sink.send(.next([]))
                sink.send(.completed)
                return
            }
            // All protected by the sink's lock (mutated only in `modify`).
            var latest = [Value?](repeating: nil, count: count)
            var combined: [Value] = []
            var missing = count
            var active = count
            for (index, signal) in signals.enumerated() {
                if lifetime.isDisposed { return }
                signal.start(Observer { event in
                    switch event {
                    case let .next(value):
                        sink.modify { enqueue in
                            if missing > 0 {
                                if latest[index] == nil { missing -= 1 }
                                latest[index] = value
                                if missing == 0 {
                                    // From now on keep a dense array; the
                                    // optional one is no longer needed.
                                    combined = latest.map { $0! }
                                    latest = []
                                    enqueue(.next(combined))
                                }
                            } else {
                                combined[index] = value
                                enqueue(.next(combined))
                            }
                        }
                    case let .error(error):
                        sink.send(.error(error))
                    case .completed:
                        sink.modify { enqueue in
                            active -= 1
                            if active == 0 { enqueue(.completed) }
                        }
                    }
                }, in: lifetime.makeChild())
            }
        })
    }

    /// Combines the latest values of `signals` and reduces them to one
    /// value (see ``combineLatest(_:)-swift.type.method``).
    public static func combineLatest<R>(_ signals: [Signal<Value>], reduce: @escaping ([Value]) -> R) -> Signal<R> {
        combineLatest(signals).map(reduce)
    }

    /// Combines the latest values of this signal and `other` into pairs.
    public func combineLatest<U>(with other: Signal<U>) -> Signal<(Value, U)> {
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

/// One of two types; lets the pairwise combinators reuse the n-ary ones.
enum Either<A, B> {
    case left(A)
    case right(B)
}
