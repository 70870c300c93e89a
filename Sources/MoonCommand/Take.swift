import Synchronization
extension Signal {
    /// Forwards the first `count` values, then completes and disposes the
    /// upstream.
    public func take(first count: Int) -> Signal<Value> {
        if count <= 0 { return .empty }
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let taken = Mutex(0)
            upstream.start(Observer { event in
                sink.modify { enqueue in
                    enqueue(event)
                    guard case .next = event else { return }
                    if taken.withLock({ $0 += 1; return $0 }) == count { enqueue(.completed) }
                }
            }, in: lifetime.makeChild())
        })
    }
}
