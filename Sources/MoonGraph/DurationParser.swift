/// Parses the durations of graph files and options: `250ms`, `2s`, `1m30s`,
/// `1h`, `1.5s`, or a bare number of seconds (`30`, `0.5`). `DurationText`
/// writes them; it reads every form that writes.
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

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    private static func isLetter(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }
}

/// How moon writes a duration, everywhere (errors, the summary, the live
/// view, history, a graph's export): the largest unit first, `ms` below a
/// second, seconds with a decimal below a minute, then minutes and hours
/// with two-digit parts after them, as a clock: `250ms`, `1.5s`, `1m30s`,
/// `2m03s`, `1h02m`. `DurationParser` reads each back.
public enum DurationText {
    public enum Precision: Sendable {
        /// A duration someone configured, in full and without zero parts:
        /// `250ms`, `2s`, `1.5s`, `1m30s`, `2m`, `1h`, `1h00m05s`.
        case exact
        /// A measured one, rounded down so nothing looks longer than it was:
        /// milliseconds below a second, tenths below a minute, seconds below
        /// an hour, minutes beyond: `12ms`, `2.0s`, `2m03s`, `1h02m`.
        case measured
        /// As `measured`, with tenths below a second too (`0.4s`): a live
        /// column that keeps its shape as it ticks.
        case ticking
    }

    public static func format(_ duration: Duration, _ precision: Precision = .exact) -> String {
        let (seconds, atto) = duration.components
        if seconds < 0 || atto < 0 {
            // A measurement below zero is a clock that stepped back.
            return precision == .exact ? "-" + format(.zero - duration, precision) : format(.zero, precision)
        }
        switch precision {
        case .exact: return exact(seconds: seconds, atto: atto)
        case .measured, .ticking:
            let ms = seconds.multipliedReportingOverflow(by: 1000).overflow ? Int64.max : seconds * 1000 + atto / 1_000_000_000_000_000
            if ms < 1000, precision == .measured { return "\(ms)ms" }
            if ms < 60_000 { return "\(ms / 1000).\(ms / 100 % 10)s" }
            let s = ms / 1000
            if s < 3600 { return "\(s / 60)m\(pad2(s % 60))s" }
            return "\(s / 3600)h\(pad2(s / 60 % 60))m"
        }
    }

    private static func exact(seconds: Int64, atto: Int64) -> String {
        if seconds == 0 {
            if atto == 0 { return "0s" }
            if atto % 1_000_000_000_000_000 == 0 { return "\(atto / 1_000_000_000_000_000)ms" }
        }
        let fraction = fractionDigits(atto)
        if seconds < 60 { return "\(seconds)\(fraction)s" }
        let h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60
        var text = h > 0 ? "\(h)h" : ""
        let secondsPart = s > 0 || atto > 0
        if m > 0 || (h > 0 && secondsPart) { text += h > 0 ? "\(pad2(m))m" : "\(m)m" }
        if secondsPart { text += "\(pad2(s))\(fraction)s" }
        return text
    }

    /// `.5`, `.25`, `.0005` for attoseconds, trailing zeros dropped; empty for none.
    private static func fractionDigits(_ atto: Int64) -> String {
        guard atto > 0 else { return "" }
        var digits = String(atto)
        digits = String(repeating: "0", count: 18 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "." + digits
    }

    private static func pad2(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
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
