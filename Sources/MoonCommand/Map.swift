extension Signal {
    /// Transforms each value.
    ///
    /// Adds no lock and no allocation per event: the upstream is already
    /// serial, so this stage is one closure call.
    @inlinable
    public func map<U>(_ transform: @escaping (Value) -> U) -> Signal<U> {
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
}
