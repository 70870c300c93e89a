extension Signal {
    /// Sends all values as one array when this signal completes (an empty
    /// array if there were none).
    public func collect() -> Signal<[Value]> {
        let upstream = startHandler
        return Signal<[Value]>(unchecked: { observer, lifetime in
            var values: [Value] = [] // per subscription; the upstream is serial
            upstream(Observer { event in
                switch event {
                case let .next(value): values.append(value)
                case let .error(error): observer.action(.error(error))
                case .completed:
                    observer.action(.next(values))
                    observer.action(.completed)
                }
            }, lifetime)
        })
    }
}
