import Foundation
import Synchronization

extension Signal {
    /// Sends at most one value per `interval`: a value arriving when the
    /// last one was sent long enough ago goes out at once; otherwise only
    /// the latest of the values that arrive meanwhile goes out, when the
    /// interval has passed.
    ///
    /// A value still waiting when the signal completes is sent before the
    /// completion (a progress display should show the final state). An
    /// error is forwarded at once.
    public func throttle(_ interval: Duration, on scheduler: DateScheduler) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let state = Mutex((lastSent: Date?.none, waiting: Value?.none, timerScheduled: false))
            // At most one timer waits at a time; holding it in a serial
            // disposable keeps a long stream from piling up tokens.
            let timer = SerialDisposable()
            lifetime.add(timer)

            @Sendable func fire() {
                let now = scheduler.now
                sink.modify { enqueue in
                    let value = state.withLock { state -> Value? in
                        state.timerScheduled = false
                        defer { state.waiting = nil }
                        if state.waiting != nil { state.lastSent = now }
                        return state.waiting
                    }
                    if let value { enqueue(.next(value)) }
                }
            }

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let now = scheduler.now
                    let wait = sink.modify { enqueue -> Duration? in
                        let (sendNow, wait) = state.withLock { state -> (Bool, Duration?) in
                            if !state.timerScheduled,
                               state.lastSent.map({ now.timeIntervalSince($0) >= interval.timeInterval }) ?? true {
                                state.lastSent = now
                                return (true, nil)
                            }
                            state.waiting = value
                            if state.timerScheduled { return (false, nil) }
                            state.timerScheduled = true
                            return (false, interval - .seconds(now.timeIntervalSince(state.lastSent ?? now)))
                        }
                        if sendNow { enqueue(.next(value)) }
                        return wait
                    }
                    if let wait {
                        timer.inner = scheduler.schedule(after: wait, fire)
                    }
                case .completed:
                    sink.modify { enqueue in
                        if let value = state.withLock({ state -> Value? in
                            defer { state.waiting = nil }
                            return state.waiting
                        }) {
                            enqueue(.next(value))
                        }
                        enqueue(.completed)
                    }
                case .error:
                    sink.send(event)
                }
            }, in: lifetime.makeChild())
        })
    }
}
