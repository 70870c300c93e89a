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

    /// The parts of one line, as bytes, fed in chunks of `chunk` bytes.
    private func parts(_ line: [UInt8], max: Int, chunk: Int) -> [[UInt8]] {
        var splitter = LineSplitter(maxLength: max)
        var out: [[UInt8]] = []
        let emit: ([UInt8], Bool) -> Void = { bytes, _ in out.append(bytes) }
        var start = 0
        while start < line.count {
            let end = Swift.min(line.count, start + chunk)
            Array(line[start..<end]).withUnsafeBytes { splitter.feed($0, emit: emit) }
            start = end
        }
        splitter.finish(emit: emit)
        return out
    }

    /// A part ends on a character boundary: CJK (3 bytes), emoji (4) and
    /// 2-byte letters decode whole in every part, every part is at most the
    /// limit, and the parts put together are the line.
    @Test(arguments: ["中", "😀", "é", "a😀中é"])
    func longLinesAreCutBetweenCharacters(_ unit: String) {
        for max in [4, 5, 7, 64, 1000] {
            for offset in 0..<4 {
                let line = Array((String(repeating: "a", count: offset) + String(repeating: unit, count: 300)).utf8)
                for chunk in [1, 3, max + 1, line.count] {
                    let got = parts(line, max: max, chunk: chunk)
                    #expect(got.allSatisfy { $0.count <= max && !$0.isEmpty })
                    #expect(Array(got.joined()) == line)
                    #expect(got.allSatisfy { String(validating: $0, as: UTF8.self) != nil }, "max \(max), offset \(offset), chunk \(chunk)")
                }
            }
        }
    }

    /// Bytes that are not UTF-8 are still cut at the limit, never lost.
    @Test func invalidBytesAreCutAtTheLimit() {
        let line: [UInt8] = Array(repeating: 0x80, count: 10) + [0xE4, 0xB8] + Array(repeating: 0xFF, count: 9)
        let got = parts(line, max: 4, chunk: 3)
        #expect(Array(got.joined()) == line)
        #expect(got.allSatisfy { $0.count <= 4 && !$0.isEmpty })
    }
}
