import Synchronization
extension Signal where Value: Equatable {
    /// Drops values equal to the one before.
    public func skipRepeats() -> Signal<Value> {
        let upstream = startHandler
        return Signal(unchecked: { observer, lifetime in
            let last = Mutex<Value?>(nil) // per subscription
            upstream(Observer { event in
                if case let .next(value) = event {
                    let repeated = last.withLock { last -> Bool in
                        if let previous = last, previous == value { return true }
                        last = value
                        return false
                    }
                    if repeated { return }
                }
                observer.action(event)
            }, lifetime)
        })
    }
}
