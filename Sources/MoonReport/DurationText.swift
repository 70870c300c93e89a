extension Duration {
    /// Human durations as in the terminal view: 12ms, 1.2s, 2m03s, 1h02m.
    public var moonDescription: String {
        let ms = Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
        return DurationText.milliseconds(ms)
    }
}

enum DurationText {
    static func milliseconds(_ ms: Int) -> String {
        let ms = max(0, ms)
        if ms < 1000 { return "\(ms)ms" }
        if ms < 60_000 {
            // One decimal, rounded down so a node never looks longer than it was.
            let tenths = ms / 100
            return "\(tenths / 10).\(tenths % 10)s"
        }
        let s = ms / 1000
        if s < 3600 { return "\(s / 60)m\(pad2(s % 60))s" }
        return "\(s / 3600)h\(pad2(s / 60 % 60))m"
    }

    /// Elapsed times in the status area: 0.4s, 12.0s, 2m03s (tenths, never ms,
    /// so the column does not jump as the view ticks).
    static func elapsed(_ ms: Int) -> String {
        let ms = max(0, ms)
        if ms < 60_000 { return "\(ms / 1000).\(ms / 100 % 10)s" }
        let s = ms / 1000
        if s < 3600 { return "\(s / 60)m\(pad2(s % 60))s" }
        return "\(s / 3600)h\(pad2(s / 60 % 60))m"
    }

    private static func pad2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
