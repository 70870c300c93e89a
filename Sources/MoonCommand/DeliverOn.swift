extension Signal {
    /// Delivers events on `scheduler`, in order, one at a time, whatever
    /// the scheduler (a serial queue, a concurrent queue, virtual time).
    ///
    /// At most one drain is scheduled at a time, and it delivers up to
    /// 256 waiting events before yielding the scheduler, so a chatty
    /// signal costs one dispatch per batch, not per event, without
    /// starving other work on a shared delivery queue.
    public func deliverOn(_ scheduler: Scheduler) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let state = DeliverOnState<Value>()

            func drain() {
                for _ in 0..<256 {
                    let event: Event<Value>? = {
                        state.lock.lock(); defer { state.lock.unlock() }
                        if let event = state.waiting.popFirst() { return event }
                        state.scheduled = false
                        return nil
                    }()
                    guard let event else { return }
                    if lifetime.isDisposed {
                        state.lock.lock(); defer { state.lock.unlock() }
                        state.waiting.removeAll()
                        state.scheduled = false
                        return
                    }
                    sink.send(event)
                }
                // More waiting: yield, keeping `scheduled` set.
                scheduler.post(drain)
            }

            upstream.start(Observer { event in
                let shouldSchedule: Bool = {
                    state.lock.lock(); defer { state.lock.unlock() }
                    state.waiting.append(event)
                    if state.scheduled { return false }
                    state.scheduled = true
                    return true
                }()
                if shouldSchedule { scheduler.post(drain) }
            }, in: lifetime.makeChild())
        })
    }

    /// Same as ``deliverOn(_:)``.
    public func observe(on scheduler: Scheduler) -> Signal<Value> {
        deliverOn(scheduler)
    }
}

private final class DeliverOnState<Value> {
    let lock = Lock()
    var waiting = FIFO<Event<Value>>()
    var scheduled = false
}
