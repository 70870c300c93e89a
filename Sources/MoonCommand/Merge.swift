import Synchronization
extension Signal {
    /// Forwards the values of all `signals` as they arrive.
    ///
    /// Completes when every signal has completed; fails on the first error
    /// (disposing the others).
    public static func merge(_ signals: [Signal<Value>]) -> Signal<Value> {
        Signal(serialized: { sink, lifetime in
            if signals.isEmpty { sink.send(.completed); return }
            let remaining = Mutex(signals.count)
            for signal in signals {
                if lifetime.isDisposed { return }
                signal.start(Observer { event in
                    switch event {
                    case .next, .error:
                        sink.send(event)
                    case .completed:
                        sink.modify { enqueue in
                            let left = remaining.withLock { count -> Int in
                                count -= 1
                                return count
                            }
                            if left == 0 { enqueue(.completed) }
                        }
                    }
                }, in: lifetime.makeChild())
            }
        })
    }

    /// Forwards the values of this signal and `other` as they arrive.
    public func merge(with other: Signal<Value>) -> Signal<Value> {
        .merge([self, other])
    }
}
