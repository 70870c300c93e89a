import Foundation

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
            var waiting = FIFO<Event<Value>>() // protected by the sink's lock
            upstream.start(Observer { event in
                if case .error = event {
                    scheduler.schedule {
                        sink.modify { enqueue in
                            waiting.removeAll()
                            enqueue(event)
                        }
                    }
                    return
                }
                sink.modify { _ in waiting.append(event) }
                scheduler.schedule(after: interval) {
                    sink.modify { enqueue in
                        if let oldest = waiting.popFirst() { enqueue(oldest) }
                    }
                }
            }, in: lifetime.makeChild())
        })
    }
}
