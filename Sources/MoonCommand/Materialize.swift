extension Signal {
    /// Turns every event into a value: the terminal event arrives as a
    /// `.next` (so a failure becomes data), followed by `completed`.
    /// A subscriber can then treat a failure as data.
    public func materialize() -> Signal<Event<Value>> {
        let upstream = startHandler
        return Signal<Event<Value>>(unchecked: { observer, lifetime in
            upstream(Observer { event in
                observer.action(.next(event))
                if event.isTerminal { observer.action(.completed) }
            }, lifetime)
        })
    }

    /// The inverse of ``materialize()``: sends the wrapped events; the
    /// first wrapped terminal event ends the signal.
    public func dematerialize<U: Sendable>() -> Signal<U> where Value == Event<U> {
        let upstream = self
        return Signal<U>(serialized: { sink, lifetime in
            upstream.start(Observer { event in
                switch event {
                case let .next(inner): sink.send(inner)
                case let .error(error): sink.send(.error(error))
                case .completed: sink.send(.completed)
                }
            }, in: lifetime.makeChild())
        })
    }
}
