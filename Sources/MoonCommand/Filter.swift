extension Signal {
    /// Forwards only the values that satisfy `isIncluded`.
    ///
    /// Like `map`, a lock-free stage over a serial upstream.
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> Signal<Value> {
        let upstream = startHandler
        return Signal(unchecked: { observer, lifetime in
            upstream(Observer { event in
                if case let .next(value) = event, !isIncluded(value) { return }
                observer.action(event)
            }, lifetime)
        })
    }
}
