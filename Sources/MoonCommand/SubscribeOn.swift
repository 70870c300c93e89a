extension Signal {
    /// Starts this signal's work on `scheduler` instead of the caller's
    /// thread. Disposing before the start has run means it never runs.
    /// Events are delivered wherever the work sends them; combine with
    /// ``deliverOn(_:)`` to choose where they arrive.
    public func subscribeOn(_ scheduler: Scheduler) -> Signal<Value> {
        let upstream = startHandler
        return Signal(unchecked: { observer, lifetime in
            lifetime.add(scheduler.schedule {
                if lifetime.isDisposed { return }
                upstream(observer, lifetime)
            })
        })
    }

    /// Same as ``subscribeOn(_:)``.
    public func start(on scheduler: Scheduler) -> Signal<Value> {
        subscribeOn(scheduler)
    }
}
