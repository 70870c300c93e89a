import Foundation

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
            // Protected by the sink's lock.
            var lastSent: Date?
            var waiting: Value?
            var timerScheduled = false
            // At most one timer waits at a time; holding it in a serial
            // disposable keeps a long stream from piling up tokens.
            let timer = SerialDisposable()
            lifetime.add(timer)

            func fire() {
                let now = scheduler.now
                sink.modify { enqueue in
                    timerScheduled = false
                    if let value = waiting {
                        waiting = nil
                        lastSent = now
                        enqueue(.next(value))
                    }
                }
            }

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let now = scheduler.now
                    let wait: Duration? = sink.modify { enqueue in
                        if !timerScheduled, lastSent.map({ now.timeIntervalSince($0) >= interval.timeInterval }) ?? true {
                            lastSent = now
                            enqueue(.next(value))
                            return nil
                        }
                        waiting = value
                        if timerScheduled { return nil }
                        timerScheduled = true
                        return interval - .seconds(now.timeIntervalSince(lastSent ?? now))
                    }
                    if let wait {
                        timer.inner = scheduler.schedule(after: wait, fire)
                    }
                case .completed:
                    sink.modify { enqueue in
                        if let value = waiting {
                            waiting = nil
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
