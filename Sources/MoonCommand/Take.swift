extension Signal {
    /// Forwards the first `count` values, then completes and disposes the
    /// upstream.
    public func take(first count: Int) -> Signal<Value> {
        if count <= 0 { return .empty }
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            var taken = 0 // protected by the sink's lock
            upstream.start(Observer { event in
                sink.modify { enqueue in
                    guard case .next = event else { enqueue(event); return }
                    taken += 1
                    enqueue(event)
                    if taken == count { enqueue(.completed) }
                }
            }, in: lifetime.makeChild())
        })
    }
}
