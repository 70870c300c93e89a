import Testing
@testable import MoonDocument

@Suite struct SourceFileTests {
    @Test func linesEndAtLFCRLFAndLoneCR() {
        let file = SourceFile(path: "f", text: "one\ntwo\r\nthree\rfour")
        #expect(file.lineCount == 4)
        #expect((1...4).map { file.line($0) } == ["one", "two", "three", "four"])
        #expect(file.line(0) == nil)
        #expect(file.line(5) == nil)
        #expect(SourceFile(path: "f", text: "a\n").line(2) == "")
    }

    @Test func locationsFromBytes() {
        let file = SourceFile(path: "f", text: "é€\nx😀y")
        #expect(lc(file.location(ofByte: 0)) == "1:1")
        #expect(lc(file.location(ofByte: 2)) == "1:2")
        #expect(lc(file.location(ofByte: 5)) == "1:3")
        #expect(lc(file.location(ofByte: 6)) == "2:1")
        #expect(lc(file.location(ofByte: 7)) == "2:2")
        #expect(lc(file.location(ofByte: 11)) == "2:3")
        #expect(lc(file.location(ofByte: 99)) == "2:4")
        #expect(lc(file.location(ofByte: -4)) == "1:1")
    }

    @Test func characterIndexesMatchLibyamlMarks() {
        // libyaml counts characters and skips the BOM.
        let index = SourceIndex(Array("\u{FEFF}é€\nx😀y".utf8))
        #expect(index.byteOffset(ofCharacter: 0) == 3)
        #expect(index.byteOffset(ofCharacter: 1) == 5)
        #expect(index.byteOffset(ofCharacter: 2) == 8)
        #expect(index.byteOffset(ofCharacter: 4) == 10)
        #expect(index.byteOffset(ofCharacter: 5) == 14)
        #expect(index.byteOffset(ofCharacter: 100) == 15)
        for offset in [3, 5, 8, 9, 10, 14] {
            #expect(index.byteOffset(ofCharacter: index.characterIndex(ofByte: offset)) == offset)
        }
    }
}
