import Synchronization
extension Signal {
    /// Delays values and completion by `interval` on `scheduler`. An error
    /// is forwarded at once (on the scheduler), dropping values still
    /// waiting: a failure should not wait behind output.
    ///
    /// Events keep their order even when the scheduler fires timers out of
    /// order: each firing delivers the oldest waiting event.
    public func delay(_ interval: Duration, on scheduler: DateScheduler) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let waiting = Mutex(FIFO<Event<Value>>())
            upstream.start(Observer { event in
                if case .error = event {
                    scheduler.schedule {
                        sink.modify { enqueue in
                            waiting.withLock { $0.removeAll() }
                            enqueue(event)
                        }
                    }
                    return
                }
                waiting.withLock { $0.append(event) }
                scheduler.schedule(after: interval) {
                    sink.modify { enqueue in
                        if let oldest = waiting.withLock({ $0.popFirst() }) { enqueue(oldest) }
                    }
                }
            }, in: lifetime.makeChild())
        })
    }
}
