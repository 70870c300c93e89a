import Synchronization
extension Signal {
    /// Delivers events on `scheduler`, in order, one at a time, whatever
    /// the scheduler (a serial queue, a concurrent queue, virtual time).
    ///
    /// At most one drain is scheduled at a time, and it delivers up to 256
    /// waiting events before yielding the scheduler, so a chatty signal
    /// does not starve other work on a shared queue.
    public func deliverOn(_ scheduler: Scheduler) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let state = Mutex((waiting: FIFO<Event<Value>>(), scheduled: false))

            @Sendable func drain() {
                for _ in 0..<256 {
                    let event = state.withLock { state -> Event<Value>? in
                        if lifetime.isDisposed { state.waiting.removeAll() }
                        if let event = state.waiting.popFirst() { return event }
                        state.scheduled = false
                        return nil
                    }
                    guard let event else { return }
                    sink.send(event)
                }
                // More waiting: yield, keeping `scheduled` set.
                scheduler.post(drain)
            }

            upstream.start(Observer { event in
                let shouldSchedule = state.withLock { state -> Bool in
                    state.waiting.append(event)
                    if state.scheduled { return false }
                    state.scheduled = true
                    return true
                }
                if shouldSchedule { scheduler.post(drain) }
            }, in: lifetime.makeChild())
        })
    }

    /// Same as ``deliverOn(_:)``.
    public func observe(on scheduler: Scheduler) -> Signal<Value> {
        deliverOn(scheduler)
    }
}
