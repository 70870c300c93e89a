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

    /// Whole milliseconds, rounded toward zero and clamped to `Int`'s range:
    /// what events and JSON carry (`delay_ms`, `timeout_ms`, `duration_ms`).
    public var milliseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1000)
        let (sum, over) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000_000))
        if overflow || over { return seconds < 0 ? .min : .max }
        return sum
    }
}
