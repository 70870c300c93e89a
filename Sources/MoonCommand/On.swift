extension Signal {
    /// Side effects at points of a subscription's life, without changing
    /// its events. Each hook runs before the event is passed on.
    ///
    /// - Parameters:
    ///   - starting: before the upstream is started.
    ///   - started: after the upstream's start handler returned.
    ///   - event: every event.
    ///   - next/error/completed: the event of that kind.
    ///   - terminated: on `error` or `completed`.
    ///   - disposed: when the subscription ends, by termination or disposal.
    public func on(
        starting: (@Sendable () -> Void)? = nil,
        started: (@Sendable () -> Void)? = nil,
        event: (@Sendable (Event<Value>) -> Void)? = nil,
        next: (@Sendable (Value) -> Void)? = nil,
        error: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil
    ) -> Signal<Value> {
        let upstream = startHandler
        return Signal(unchecked: { observer, lifetime in
            starting?()
            if let disposed { lifetime.add(disposed) }
            upstream(Observer { received in
                event?(received)
                switch received {
                case let .next(value): next?(value)
                case let .error(failure): error?(failure); terminated?()
                case .completed: completed?(); terminated?()
                }
                observer.action(received)
            }, lifetime)
            started?()
        })
    }
}
