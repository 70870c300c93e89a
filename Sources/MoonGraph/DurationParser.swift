/// Parses and formats the durations of graph files: `250ms`, `2s`, `1m30s`,
/// `1h`, `1.5s`, or a bare number of seconds (`30`, `0.5`).
public enum DurationParser {
    /// The accepted forms, for error messages.
    public static let acceptedForms = "a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds"

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var text: String
        public var description: String { "invalid duration '\(text)'; write \(DurationParser.acceptedForms)" }
    }

    /// The longest duration accepted (100 years), so that arithmetic on it never overflows.
    public static let maximumSeconds: Double = 100 * 365 * 24 * 3600

    public static func parse(_ text: String) throws(ParseError) -> Duration {
        let trimmed = text.trimmingSpaces
        let chars = Array(trimmed.utf8)
        guard !chars.isEmpty else { throw ParseError(text: text) }
        var i = 0
        var total = 0.0
        var parts = 0
        while i < chars.count {
            // A number: digits, optionally a fraction.
            let start = i
            while i < chars.count, isDigit(chars[i]) { i += 1 }
            var intEnd = i
            if i < chars.count, chars[i] == UInt8(ascii: ".") {
                i += 1
                let fracStart = i
                while i < chars.count, isDigit(chars[i]) { i += 1 }
                if i == fracStart { throw ParseError(text: text) }
                intEnd = i
            }
            guard intEnd > start, chars[start] != UInt8(ascii: "."),
                  let number = Double(String(decoding: chars[start..<intEnd], as: UTF8.self))
            else { throw ParseError(text: text) }
            // A unit, or nothing for a bare number of seconds (only as the whole text).
            let unitStart = i
            while i < chars.count, isLetter(chars[i]) { i += 1 }
            let unit = String(decoding: chars[unitStart..<i], as: UTF8.self)
            let scale: Double
            switch unit {
            case "ms": scale = 0.001
            case "s": scale = 1
            case "m": scale = 60
            case "h": scale = 3600
            case "":
                guard parts == 0, i == chars.count else { throw ParseError(text: text) }
                scale = 1
            default: throw ParseError(text: text)
            }
            total += number * scale
            parts += 1
        }
        guard total.isFinite, total <= maximumSeconds else { throw ParseError(text: text) }
        return .nanoseconds(Int64((total * 1e9).rounded()))
    }

    /// The shortest text `parse` reads back as `duration`: `250ms`, `2s`, `1m30s`, `1h`, `1.5s`, `0s`.
    public static func format(_ duration: Duration) -> String {
        let (seconds, atto) = duration.components
        if seconds < 0 || atto < 0 { return "-" + format(.zero - duration) }
        let millis = atto / 1_000_000_000_000_000
        let exactMillis = atto % 1_000_000_000_000_000 == 0
        if seconds == 0 {
            if atto == 0 { return "0s" }
            if exactMillis { return "\(millis)ms" }
            return "\(Double(atto) / 1e18)s"
        }
        if !exactMillis || millis != 0 {
            let value = Double(seconds) + Double(atto) / 1e18
            if seconds < 60 { return "\(trim(value))s" }
        }
        var parts = ""
        let h = seconds / 3600, m = (seconds % 3600) / 60, s = seconds % 60
        if h > 0 { parts += "\(h)h" }
        if m > 0 { parts += "\(m)m" }
        if s > 0 || atto != 0 {
            if atto == 0 { parts += "\(s)s" } else { parts += "\(trim(Double(s) + Double(atto) / 1e18))s" }
        }
        return parts
    }

    private static func trim(_ value: Double) -> String {
        var text = String(value)
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    private static func isLetter(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}
