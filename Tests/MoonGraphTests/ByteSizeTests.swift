import Testing
@testable import MoonGraph

@Suite struct ByteSizeTests {
    static let parsed: [(String, Int64)] = [
        ("5G", 5 << 30), ("500M", 500 << 20), ("64K", 64 << 10), ("0", 0), ("1.5G", 3 << 29),
        ("2 KiB", 2 << 10), ("1.5GiB", 3 << 29), ("512 B", 512), ("5 GB", 5 << 30), ("1 TiB", 1 << 40),
        ("2g", 2 << 30), ("512m", 512 << 20), ("1Gi", 1 << 30), ("7 EiB", 7 << 60),
    ]

    @Test(arguments: parsed)
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test func notSizes() {
        for text in ["", "lots", "-1G", "5Q", "KiB", "1.2.3 MiB"] { #expect(ByteSize.parse(text) == nil, "\(text)") }
    }

    /// Bits, signs, exponents, hex, stray points and sizes past 64 bits are
    /// refused (never a trap): a size is digits, one decimal part, a unit.
    @Test func looseSizesAreRefused() {
        for text in ["1Gb", "1gb", "1Mib", "1 b", "1.5.G", ".5G", "1.G", "+1G", "1e9", "1e3G", "0x10", "nan", "inf",
                     "1GiBB", "1 G B", "8EiB", "99999999999G", "99999999999999999999999", "１G"] {
            #expect(ByteSize.parse(text) == nil, "\(text)")
        }
        #expect(ByteSize.slip(in: "1Gb") != nil)
        #expect(ByteSize.slip(in: "1GB") == nil)
    }

    /// One convention: binary units with IEC names, one decimal unless whole.
    static let printed: [(Int64, String)] = [
        (0, "0 B"), (512, "512 B"), (1023, "1023 B"), (1024, "1 KiB"), (1229, "1.2 KiB"), (2048, "2 KiB"),
        (100_000_000, "95.4 MiB"), (64 << 20, "64 MiB"), (5 << 30, "5 GiB"), (1 << 40, "1 TiB"), (Int64.max, "8 EiB"),
        // Ties round to even, as `%.1f` rounds them; a sign is kept.
        (1280, "1.2 KiB"), (1792, "1.8 KiB"), (-1536, "-1.5 KiB"), (Int64.min, "-8 EiB"),
    ]

    @Test(arguments: printed)
    func text(bytes: Int64, expected: String) {
        #expect(ByteSize.text(bytes) == expected)
    }

    /// What `text` prints, `parse` reads back (to the decimal it shows).
    static let roundTrips: [Int64] = [0, 512, 1229, 2048, 100_000_000, 64 << 20, 5 << 30, 3 << 39]

    @Test(arguments: roundTrips)
    func whatIsPrintedReadsBack(bytes: Int64) throws {
        let back = try #require(ByteSize.parse(ByteSize.text(bytes)))
        #expect(abs(Double(back - bytes)) <= Double(max(bytes, 1)) * 0.05, "\(ByteSize.text(bytes)) read as \(back)")
    }
}
