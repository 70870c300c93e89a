extension Signal {
    /// Forwards this signal's events until `trigger` sends anything (a
    /// value, completion or an error), then completes and disposes both.
    public func takeUntil<U: Sendable>(_ trigger: Signal<U>) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            trigger.start(Observer { _ in sink.send(.completed) }, in: lifetime.makeChild())
            if sink.isClosed { return }
            upstream.start(sink.input, in: lifetime.makeChild())
        })
    }
}
