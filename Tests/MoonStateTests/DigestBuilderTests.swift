import Testing
@testable import MoonState

@Suite struct DigestBuilderTests {
    func built(_ parts: [String], capacity: Int = 4096) -> DigestBuilder {
        var digest = DigestBuilder("t", capacity: capacity)
        for part in parts { digest.add(part) }
        return digest
    }

    /// Parts are length-prefixed: moving a boundary changes the digest and
    /// the stamp; the same parts give the same of both, whatever the capacity.
    @Test func theSamePartsAloneGiveTheSameStamp() {
        #expect(built(["ab", "c"]).stamp() == built(["ab", "c"], capacity: 1).stamp())
        #expect(built(["ab", "c"]).stamp() != built(["a", "bc"]).stamp())
        #expect(built(["ab", "c"]).finish() != built(["a", "bc"]).finish())
        #expect(built(["x"]).stamp() != built(["y"]).stamp())
        // Past the buffer's block the stamp folds the SHA-256, still a function of the parts.
        let long = String(repeating: "z", count: 70_000)
        #expect(built([long, "a"]).stamp() == built([long, "a"]).stamp())
        #expect(built([long, "a"]).stamp() != built([long, "b"]).stamp())
    }
}
