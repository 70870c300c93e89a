import Synchronization
extension Signal {
    /// Restarts this (cold) signal after an error, up to `policy.times`
    /// more times, waiting as the policy says on `scheduler` (at once
    /// without one).
    ///
    /// Values of failed attempts are forwarded as they came. The last
    /// error is sent when no retry is left. Disposing the subscription
    /// during a wait cancels the retry.
    ///
    /// - Parameter onRetry: called (outside any lock) just before each
    ///   wait, with the failed attempt's number (1-based), the wait and the
    ///   error.
    public func retry(
        _ policy: RetryPolicy,
        on scheduler: DateScheduler?,
        onRetry: (@Sendable (_ failedAttempt: Int, _ delay: Duration, _ error: Error) -> Void)? = nil
    ) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            let attemptLifetime = SerialDisposable()
            let timer = SerialDisposable()
            lifetime.add(attemptLifetime)
            lifetime.add(timer)
            let failures = Mutex(0)

            @Sendable func startAttempt() {
                if lifetime.isDisposed { return }
                let child = CompositeDisposable()
                attemptLifetime.inner = child
                upstream.start(Observer { event in
                    guard case let .error(error) = event else {
                        sink.send(event)
                        return
                    }
                    let failed = failures.withLock { $0 += 1; return $0 }
                    guard failed <= policy.times else {
                        sink.send(event)
                        return
                    }
                    let wait = policy.delay(afterAttempt: failed)
                    onRetry?(failed, wait, error)
                    if let scheduler {
                        timer.inner = scheduler.schedule(after: wait) { startAttempt() }
                    } else {
                        startAttempt()
                    }
                }, in: child)
            }
            startAttempt()
        })
    }

    /// Restarts this signal after an error, up to `count` more times, at
    /// once.
    public func retry(upTo count: Int) -> Signal<Value> {
        retry(RetryPolicy(times: count), on: nil)
    }

    /// Restarts this signal after an error, up to `count` more times;
    /// retry `n` waits `delay × backoff^(n-1)`, capped by `maxDelay`.
    public func retry(
        upTo count: Int,
        delay: Duration,
        backoff: Double = 1,
        maxDelay: Duration? = nil,
        on scheduler: DateScheduler
    ) -> Signal<Value> {
        retry(RetryPolicy(times: count, delay: delay, backoff: backoff, maxDelay: maxDelay), on: scheduler)
    }
}
