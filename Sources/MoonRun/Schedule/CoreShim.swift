import Foundation
import MoonCommand
import MoonGraph

// Until the core's Duration API lands (branch corelib): the same calls over
// today's TimeInterval API. Deleted at the merge.

extension Duration {
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

extension DateScheduler {
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Disposable? {
        schedule(after: delay.timeInterval, action)
    }
}

extension Signal {
    func timeout(after limit: Duration, raising error: Error, on scheduler: DateScheduler) -> Signal<Value> {
        timeout(after: limit.timeInterval, raising: error, on: scheduler)
    }

    func retry(_ policy: MoonGraph.RetryPolicy, on scheduler: DateScheduler,
               onRetry: @escaping (_ failedAttempt: Int, _ delay: Duration, _ error: Error) -> Void) -> Signal<Value> {
        // The core's policy is made from the graph's delays, attempt by attempt.
        let core = MoonCommand.RetryPolicy(times: policy.times, delay: policy.delay.timeInterval, backoff: policy.backoff,
                                           maxDelay: policy.maxDelay?.timeInterval ?? .infinity)
        return retry(core, on: scheduler) { failed, _, error in
            onRetry(failed, policy.delay(afterAttempt: failed), error)
        }
    }
}
