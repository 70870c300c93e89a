import Testing
@testable import MoonProcess

@Suite struct LineSplitterTests {
    private func split(_ chunks: [String], max: Int = 4) -> [String] {
        var splitter = LineSplitter(maxLength: max)
        var out: [String] = []
        let emit: ([UInt8], Bool) -> Void = { bytes, continued in
            out.append(String(decoding: bytes, as: UTF8.self) + (continued ? "+" : ""))
        }
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { splitter.feed($0, emit: emit) }
        }
        splitter.finish(emit: emit)
        return out
    }

    @Test func splitsAcrossChunksWithoutTearing() {
        #expect(split(["a", "b\nc", "d\n\ne"], max: 100) == ["ab", "cd", "", "e"])
    }

    @Test func longLinesComeInMaxSizedParts() {
        #expect(split(["abcdefghij\n"]) == ["abcd+", "efgh+", "ij"])
        #expect(split(["ab", "cdef", "ghij", "\n"]) == ["abcd+", "efgh+", "ij"])
        #expect(split(["abcd\n"]) == ["abcd"])
        #expect(split(["abcd", "\n"]) == ["abcd"])
        #expect(split(["abcdefgh\n"]) == ["abcd+", "efgh"])
        #expect(split(["abcdefgh"]) == ["abcd+", "efgh"])
    }

    @Test func emptyInputGivesNoLines() {
        #expect(split([]) == [])
        #expect(split(["\n"]) == [""])
    }
}
