import Testing
@testable import MoonGraph

@Suite struct ByteSizeTests {
    @Test(arguments: [("5G", Int64(5) << 30), ("500M", Int64(500) << 20), ("64K", Int64(64) << 10), ("0", 0), ("1.5G", Int64(3) << 29),
                      ("2 KiB", Int64(2) << 10), ("1.5GiB", Int64(3) << 29), ("512 B", 512), ("5 GB", Int64(5) << 30), ("1 TiB", Int64(1) << 40)])
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test func notSizes() {
        for text in ["", "lots", "-1G", "5Q", "KiB", "1.2.3 MiB"] { #expect(ByteSize.parse(text) == nil, "\(text)") }
    }

    /// One convention: binary units with IEC names, one decimal unless whole.
    @Test(arguments: [(Int64(0), "0 B"), (512, "512 B"), (1023, "1023 B"), (1024, "1 KiB"), (1229, "1.2 KiB"), (2048, "2 KiB"),
                      (100_000_000, "95.4 MiB"), (64 << 20, "64 MiB"), (5 << 30, "5 GiB"), (1 << 40, "1 TiB"), (Int64.max, "8 EiB")])
    func text(bytes: Int64, expected: String) {
        #expect(ByteSize.text(bytes) == expected)
    }

    /// What `text` prints, `parse` reads back (to the decimal it shows).
    @Test(arguments: [Int64(0), 512, 1229, 2048, 100_000_000, 64 << 20, 5 << 30, 3 << 39])
    func whatIsPrintedReadsBack(bytes: Int64) throws {
        let back = try #require(ByteSize.parse(ByteSize.text(bytes)))
        #expect(abs(Double(back - bytes)) <= Double(max(bytes, 1)) * 0.05, "\(ByteSize.text(bytes)) read as \(back)")
    }
}
