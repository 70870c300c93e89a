extension Signal {
    /// Fails with `error` (by default ``SignalError/timedOut(after:)``) if
    /// this signal has not terminated `interval` after its start, and
    /// disposes it (which cancels its work).
    public func timeout(
        after interval: Duration,
        raising error: Error? = nil,
        on scheduler: DateScheduler
    ) -> Signal<Value> {
        let upstream = self
        let failure = error ?? SignalError.timedOut(after: interval)
        return Signal(serialized: { sink, lifetime in
            lifetime.add(scheduler.schedule(after: interval) {
                sink.send(.error(failure))
            })
            upstream.start(sink.input, in: lifetime.makeChild())
        })
    }
}
