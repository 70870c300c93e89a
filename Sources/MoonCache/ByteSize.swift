import Foundation

/// Sizes as people write them: `5G`, `500M`, `64K`, `1T`, `1.5G` or a
/// number of bytes (powers of 1024). MoonReport's `ByteText` writes them back.
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.hasSuffix("iB") || digits.hasSuffix("ib") { digits = digits.dropLast(2) } else if digits.hasSuffix("B") || digits.hasSuffix("b") { digits = digits.dropLast() }
        var factor: Double = 1
        if let unit = digits.last, let power = "KMGT".firstIndex(of: Character(unit.uppercased())) {
            factor = pow(1024, Double("KMGT".distance(from: "KMGT".startIndex, to: power) + 1))
            digits = digits.dropLast()
        }
        guard let number = Double(digits), number >= 0, number.isFinite, number * factor < 9e18 else { return nil }
        return Int64(number * factor)
    }
}
