import Foundation

/// How moon writes a date: the event stream's RFC 3339 (UTC, milliseconds),
/// which `moon replay` reads back, and one form for people (`moon history`,
/// `moon cache stats`): local time to the second, `2026-11-22 11:04:05`.
public enum DateText {
    /// Seconds since 1970 within years 0 to 9999: a date read from the
    /// history (files a checkout may bring) converts to `time_t` without a trap.
    static func clamped(_ date: Date) -> Double {
        let seconds = date.timeIntervalSince1970
        return seconds.isNaN ? 0 : min(max(seconds, -62_167_219_200), 253_402_300_799)
    }

    /// The event stream's `ts`: RFC 3339 in UTC with milliseconds (rounded
    /// down), `2026-11-22T10:04:05.123Z`. Its precision is part of the format.
    public static func rfc3339(_ date: Date) -> String {
        let interval = clamped(date)
        var seconds = time_t(interval.rounded(.down))
        var millis = Int(((interval - Double(seconds)) * 1000).rounded(.down))
        if millis >= 1000 { millis = 999 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Written as bytes into one buffer: every event has one.
        let year = Int(parts.tm_year) + 1900
        return String(unsafeUninitializedCapacity: 32) { buffer in
            var count = 0
            func put(_ value: Int, _ width: Int) {
                var rest = max(0, value)
                for index in stride(from: count + width - 1, through: count, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                count += width
            }
            func put(_ byte: Unicode.Scalar) {
                buffer[count] = UInt8(ascii: byte)
                count += 1
            }
            put(year, year > 9999 ? 5 : 4)
            put("-"); put(Int(parts.tm_mon) + 1, 2)
            put("-"); put(Int(parts.tm_mday), 2)
            put("T"); put(Int(parts.tm_hour), 2)
            put(":"); put(Int(parts.tm_min), 2)
            put(":"); put(Int(parts.tm_sec), 2)
            put("."); put(millis, 3)
            put("Z")
            return count
        }
    }

    /// Local time (the `TZ` variable, else the system's zone) to the second.
    public static func human(_ date: Date) -> String {
        var seconds = time_t(clamped(date).rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2)) "
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
    }

    /// Parses `2026-11-22T10:04:05.123Z` (fraction optional; `Z` or `±hh:mm`).
    /// The time lands half a millisecond into its millisecond so that
    /// formatting it again gives the same text despite binary fractions.
    public static func parseRFC3339(_ text: String) -> Date? {
        let c = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= c.count else { return nil }
            var v = 0
            for k in at..<(at + n) {
                guard (48...57).contains(c[k]) else { return nil }
                v = v * 10 + Int(c[k] - 48)
            }
            return v
        }
        guard c.count >= 20, let year = digits(0, 4), c[4] == 45, let month = digits(5, 2), c[7] == 45, let day = digits(8, 2),
              c[10] == 84 || c[10] == 116 || c[10] == 32, let hour = digits(11, 2), c[13] == 58, let minute = digits(14, 2),
              c[16] == 58, let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var millis = 0.0
        if i < c.count && c[i] == 46 {
            i += 1
            var scale = 100.0
            let start = i
            while i < c.count, (48...57).contains(c[i]) {
                millis += Double(c[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offset = 0
        if i < c.count && (c[i] == 90 || c[i] == 122) {
            i += 1
        } else if i < c.count && (c[i] == 43 || c[i] == 45), let oh = digits(i + 1, 2), i + 3 < c.count, c[i + 3] == 58, let om = digits(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (c[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == c.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + (millis.rounded(.down) + 0.5) / 1000)
    }
}
