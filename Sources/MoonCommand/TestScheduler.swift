import Foundation
import Synchronization

/// A scheduler with virtual time, for deterministic tests of time-based
/// behaviour: nothing runs until the test calls ``advance()``,
/// ``advance(by:)`` or ``run()``.
///
/// Actions scheduled for the same instant run in the order they were
/// scheduled. Actions are never run while the scheduler's lock is held, so
/// they may schedule more work.
public final class TestScheduler: DateScheduler {
    private struct Scheduled {
        let date: Date
        let action: @Sendable () -> Void
        let token: ActionDisposable
    }

    private struct State {
        var now: Date
        /// Sorted by date; equal dates in the order they were scheduled.
        var scheduled: [Scheduled] = []
    }

    private let state: Mutex<State>

    /// A test scheduler whose clock starts at `startDate`.
    public init(startDate: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        state = Mutex(State(now: startDate))
    }

    /// The virtual time.
    public var now: Date { state.withLock { $0.now } }

    /// How many actions wait to run.
    public var pendingCount: Int {
        state.withLock { $0.scheduled.filter { !$0.token.isDisposed }.count }
    }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        schedule(after: .zero, action)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Disposable? {
        let token = ActionDisposable()
        state.withLock { state in
            let item = Scheduled(date: state.now.addingTimeInterval(max(0, delay.timeInterval)), action: action, token: token)
            // Binary search for the first later date keeps same-date order.
            var low = 0, high = state.scheduled.count
            while low < high {
                let mid = (low + high) / 2
                if state.scheduled[mid].date <= item.date { low = mid + 1 } else { high = mid }
            }
            state.scheduled.insert(item, at: low)
        }
        return token
    }

    /// Runs the actions due now, without moving the clock.
    public func advance() {
        advance(by: .zero)
    }

    /// Moves the clock forward by `duration`, running every action that
    /// falls due on the way, at its own time.
    public func advance(by duration: Duration) {
        advance(to: now.addingTimeInterval(duration.timeInterval))
    }

    /// Moves the clock to `date`, running every action due by then.
    public func advance(to date: Date) {
        while true {
            let next = state.withLock { state -> Scheduled? in
                guard let first = state.scheduled.first, first.date <= date else {
                    if state.now < date { state.now = date }
                    return nil
                }
                state.scheduled.removeFirst()
                if state.now < first.date { state.now = first.date }
                return first
            }
            guard let next else { return }
            if !next.token.isDisposed { next.action() }
        }
    }

    /// Runs every scheduled action, including ones scheduled meanwhile,
    /// moving the clock as far as needed.
    public func run() {
        while let last = state.withLock({ $0.scheduled.last?.date }) {
            advance(to: last)
        }
    }
}
