extension Duration {
    /// "30s", "1.5s", "250ms", "2m": how messages name a duration.
    public var shortDescription: String {
        let (seconds, attoseconds) = components
        let ms = Int((Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded())
        if ms % 60_000 == 0, ms >= 60_000 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        if ms < 1000 { return "\(ms)ms" }
        return "\(Double(ms) / 1000)s"
    }

    /// Whole milliseconds (a `retry` event's `delay_ms`).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}
