import Foundation

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
        let sequence: Int
        let action: () -> Void
        let token: ActionDisposable
    }

    private let lock = Lock()
    private var currentDate: Date
    private var sequence = 0
    // Sorted by (date, sequence).
    private var scheduled: [Scheduled] = []

    /// A test scheduler whose clock starts at `startDate`.
    public init(startDate: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        currentDate = startDate
    }

    /// The virtual time.
    public var now: Date {
        lock.lock(); defer { lock.unlock() }
        return currentDate
    }

    /// How many actions wait to run.
    public var pendingCount: Int {
        lock.lock(); defer { lock.unlock() }
        return scheduled.filter { !$0.token.isDisposed }.count
    }

    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable? {
        schedule(after: .zero, action)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Disposable? {
        let token = ActionDisposable()
        lock.lock(); defer { lock.unlock() }
        let item = Scheduled(date: currentDate.addingTimeInterval(max(0, delay.timeInterval)),
                             sequence: sequence, action: action, token: token)
        sequence += 1
        // Binary search for the insertion point keeps (date, sequence) order.
        var low = 0, high = scheduled.count
        while low < high {
            let mid = (low + high) / 2
            if scheduled[mid].date <= item.date { low = mid + 1 } else { high = mid }
        }
        scheduled.insert(item, at: low)
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
            let next: Scheduled? = {
                lock.lock(); defer { lock.unlock() }
                guard let first = scheduled.first, first.date <= date else {
                    if currentDate < date { currentDate = date }
                    return nil
                }
                scheduled.removeFirst()
                if currentDate < first.date { currentDate = first.date }
                return first
            }()
            guard let next else { return }
            if !next.token.isDisposed { next.action() }
        }
    }

    /// Runs every scheduled action, including ones scheduled meanwhile,
    /// moving the clock as far as needed.
    public func run() {
        while true {
            let last: Date? = {
                lock.lock(); defer { lock.unlock() }
                return scheduled.last?.date
            }()
            guard let last else { return }
            advance(to: last)
        }
    }
}
