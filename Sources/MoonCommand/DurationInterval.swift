import Foundation

extension Duration {
    /// The duration in seconds, for `Date` arithmetic (schedulers report
    /// `now` as a `Date`, since events carry wall-clock times).
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Whole nanoseconds, clamped to `0...limit` (about 31 years by
    /// default): what timers take, without overflow for a huge delay.
    public func clampedNanoseconds(limit: Duration = .seconds(1_000_000_000)) -> Int64 {
        if self <= .zero { return 0 }
        let clamped = Swift.min(self, limit)
        let (seconds, attoseconds) = clamped.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
