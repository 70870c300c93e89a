import Synchronization
extension Signal {
    /// Sends all values as one array when this signal completes (an empty
    /// array if there were none).
    public func collect() -> Signal<[Value]> {
        let upstream = startHandler
        return Signal<[Value]>(unchecked: { observer, lifetime in
            let values = Mutex<[Value]>([]) // per subscription
            upstream(Observer { event in
                switch event {
                case let .next(value): values.withLock { $0.append(value) }
                case let .error(error): observer.action(.error(error))
                case .completed:
                    observer.action(.next(values.withLock { $0 }))
                    observer.action(.completed)
                }
            }, lifetime)
        })
    }
}
