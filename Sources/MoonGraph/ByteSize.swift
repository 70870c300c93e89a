import Foundation

/// Sizes, in one convention: binary units (powers of 1024) named as IEC
/// names them. `text` writes `512 B`, `1.2 KiB`, `2 KiB`, `95.4 MiB`, `1 TiB`;
/// `parse` reads that back, and what people write on a command line: `5G`,
/// `500M`, `64K`, `1.5GiB`, `5 GB` (also powers of 1024) or a number of bytes.
public enum ByteSize {
    private static let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// `bytes` in the largest unit that keeps a number of at least 1, with
    /// one decimal unless it is whole.
    public static func text(_ bytes: Int64) -> String {
        // Integer arithmetic rounds as `%.1f` does (half to even: the
        // quotient is exact), without `String(format:)`, whose variadic
        // arguments cost the runtime a conformance search per process.
        let magnitude = bytes.magnitude
        var unit = 0
        var divisor: UInt64 = 1
        while unit < units.count - 1, magnitude / divisor >= 1024 {
            divisor *= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        var whole = magnitude / divisor
        let rest = magnitude % divisor
        // rest < divisor <= 2^60, so ten times it fits.
        var tenths = rest * 10 / divisor
        let left = rest * 10 % divisor
        if left * 2 > divisor || (left * 2 == divisor && tenths % 2 == 1) { tenths += 1 }
        if tenths == 10 { whole += 1; tenths = 0 }
        let sign = bytes < 0 ? "-" : ""
        return sign + String(whole) + (tenths == 0 ? "" : "." + String(tenths)) + " " + units[unit]
    }

    /// A size as people write it: a number (digits, and at most one
    /// decimal part: no sign, exponent or hex), then, after optional
    /// spaces, nothing or `B` (bytes), or K, M, G, T, P or E (either case)
    /// alone or followed by `B`, `i` or `iB`. A lower-case `b` is refused:
    /// `1Gb` is a gigabit as often as a gigabyte. Nil for anything else, and
    /// for a size of 8 EiB or more (it would not fit in 64 bits).
    public static func parse(_ text: String) -> Int64? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        rest = rest.dropFirst(number.count)
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }), let value = Double(number) else { return nil }
        while rest.first == " " { rest = rest.dropFirst() }
        var factor: Double = 1
        if let unit = rest.first, let power = "KMGTPE".firstIndex(of: Character(unit.uppercased())) {
            factor = pow(1024, Double("KMGTPE".distance(from: "KMGTPE".startIndex, to: power) + 1))
            rest = rest.dropFirst()
            if rest == "i" || rest == "iB" { rest = "" }
        }
        guard rest.isEmpty || rest == "B", value * factor < 9e18 else { return nil }
        return Int64(value * factor)
    }

    /// Why `text` did not read as a size, when a common slip explains it.
    public static func slip(in text: String) -> String? {
        text.hasSuffix("b") ? "a lower-case b means bits" : nil
    }
}
