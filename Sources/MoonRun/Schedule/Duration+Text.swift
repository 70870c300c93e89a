extension Duration {
    /// Whole milliseconds (a `retry` event's `delay_ms`).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}
