extension Signal where Value: Equatable {
    /// Drops values equal to the one before.
    public func skipRepeats() -> Signal<Value> {
        let upstream = startHandler
        return Signal(unchecked: { observer, lifetime in
            var last: Value? // per subscription; the upstream is serial
            upstream(Observer { event in
                if case let .next(value) = event {
                    if let previous = last, previous == value { return }
                    last = value
                }
                observer.action(event)
            }, lifetime)
        })
    }
}
