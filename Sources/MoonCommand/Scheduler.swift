import Dispatch
import Foundation

/// Runs actions somewhere: on a queue, right away, or in virtual time.
public protocol Scheduler: AnyObject, Sendable {
    /// Schedules `action`; returns a disposable that cancels it if it has
    /// not started yet (nil when it cannot be cancelled).
    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable?

    /// Schedules `action` with no way to cancel it, for callers that would
    /// drop the disposable anyway. Same order and thread as `schedule`.
    func post(_ action: @escaping @Sendable () -> Void)
}

extension Scheduler {
    public func post(_ action: @escaping @Sendable () -> Void) {
        schedule(action)
    }
}

/// A scheduler that knows the time and can run actions later.
///
/// Every time-based operator (delay, timeout, retry, throttle) takes one,
/// so tests pass a ``TestScheduler`` and advance virtual time instead of
/// sleeping.
public protocol DateScheduler: Scheduler {
    /// The scheduler's current time: a wall-clock `Date`, since events
    /// carry it. Delays do not depend on it (a wall-clock change does not
    /// stretch a timeout).
    var now: Date { get }

    /// Schedules `action` to run `delay` from now (at once if not positive).
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Disposable?
}

/// Runs every action at once, on the calling thread.
public final class ImmediateScheduler: Scheduler {
    /// A new immediate scheduler.
    public init() {}

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        action()
        return nil
    }
}

/// Runs actions on a Dispatch queue.
///
/// Time is Dispatch's monotonic clock for delays (so a wall-clock change
/// does not stretch a timeout); `now` reports the wall clock.
public final class QueueScheduler: DateScheduler {
    /// The queue actions run on.
    public let queue: DispatchQueue

    /// A scheduler over an existing queue.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// A scheduler over a new serial queue.
    public convenience init(label: String, qos: DispatchQoS = .default) {
        self.init(queue: DispatchQueue(label: label, qos: qos))
    }

    /// A scheduler over the main queue.
    public static let main = QueueScheduler(queue: .main)

    public var now: Date { Date() }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        let token = ActionDisposable()
        queue.async {
            if !token.isDisposed { action() }
        }
        return token
    }

    public func post(_ action: @escaping @Sendable () -> Void) {
        queue.async(execute: action)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Disposable? {
        let token = ActionDisposable()
        let nanoseconds = Int(delay.clampedNanoseconds())
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if !token.isDisposed { action() }
        }
        return token
    }
}
