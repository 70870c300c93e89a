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
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        var number = String(format: "%.1f", value)
        if number.hasSuffix(".0") { number.removeLast(2) }
        return number + " " + units[unit]
    }

    public static func parse(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.hasSuffix("iB") || digits.hasSuffix("ib") { digits = digits.dropLast(2) } else if digits.hasSuffix("B") || digits.hasSuffix("b") { digits = digits.dropLast() }
        var factor: Double = 1
        if let unit = digits.last, let power = "KMGTPE".firstIndex(of: Character(unit.uppercased())) {
            factor = pow(1024, Double("KMGTPE".distance(from: "KMGTPE".startIndex, to: power) + 1))
            digits = digits.dropLast()
        }
        // `1.2 KiB`: a space between the number and its unit.
        while digits.last == " " { digits = digits.dropLast() }
        guard let number = Double(digits), number >= 0, number.isFinite, number * factor < 9e18 else { return nil }
        return Int64(number * factor)
    }
}
