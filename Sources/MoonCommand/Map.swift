extension Signal {
    /// Transforms each value.
    ///
    /// Adds no lock: the upstream is already serial.
    public func map<U: Sendable>(_ transform: @escaping @Sendable (Value) -> U) -> Signal<U> {
        let upstream = startHandler
        return Signal<U>(unchecked: { observer, lifetime in
            upstream(Observer { event in
                switch event {
                case let .next(value): observer.action(.next(transform(value)))
                case let .error(error): observer.action(.error(error))
                case .completed: observer.action(.completed)
                }
            }, lifetime)
        })
    }

    /// Transforms each value, dropping those that map to nil.
    public func compactMap<U: Sendable>(_ transform: @escaping @Sendable (Value) -> U?) -> Signal<U> {
        let upstream = startHandler
        return Signal<U>(unchecked: { observer, lifetime in
            upstream(Observer { event in
                switch event {
                case let .next(value): if let mapped = transform(value) { observer.action(.next(mapped)) }
                case let .error(error): observer.action(.error(error))
                case .completed: observer.action(.completed)
                }
            }, lifetime)
        })
    }
}
