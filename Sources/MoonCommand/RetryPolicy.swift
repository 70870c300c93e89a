/// How often and how patiently a failing signal is tried again: the graph's
/// `retry:` and the ``Signal/retry(_:on:onRetry:)`` operator share it.
public struct RetryPolicy: Sendable, Hashable, Codable {
    /// Extra attempts after the first; 0 means no retry.
    public var times: Int
    /// The wait before the first retry.
    public var delay: Duration
    /// Each further retry waits `backoff` times longer (≥ 1; 1 = constant delay).
    public var backoff: Double
    /// The longest wait, whatever the backoff says; nil = no cap.
    public var maxDelay: Duration?

    public init(times: Int = 0, delay: Duration = .zero, backoff: Double = 1, maxDelay: Duration? = nil) {
        self.times = times
        self.delay = delay
        self.backoff = backoff
        self.maxDelay = maxDelay
    }

    /// No retry.
    public static let none = RetryPolicy()

    /// The total number of attempts, the first included.
    public var attempts: Int { times + 1 }

    /// The wait after attempt `attempt` (1-based) failed, before the next one:
    /// `delay × backoff^(attempt-1)`, capped by `maxDelay` (and, so that a huge
    /// backoff cannot overflow, by a year).
    public func delay(afterAttempt attempt: Int) -> Duration {
        let exponent = Double(max(0, attempt - 1))
        let base = delay.timeInterval
        var seconds = base * Self.power(backoff, exponent)
        if let maxDelay { seconds = min(seconds, maxDelay.timeInterval) }
        if !seconds.isFinite || seconds > Self.ceiling { seconds = Self.ceiling }
        if seconds == base { return delay }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    private static let ceiling: Double = 365 * 24 * 3600

    /// Integer exponent by repeated squaring: exact for the integer backoffs
    /// people write (2, 3), where `pow` may be off in the last bit.
    private static func power(_ x: Double, _ y: Double) -> Double {
        var result = 1.0, base = x, n = Int(min(y, 4096))
        while n > 0 {
            if n & 1 == 1 { result *= base }
            base *= base
            n >>= 1
            if !result.isFinite { return .infinity }
        }
        return result
    }
}
