import Foundation
import MoonSystem
import Testing
@testable import MoonState

/// Names that are not UTF-8: `FileName` shows their bytes, the scanner
/// reports them instead of dropping them, a depfile refuses them.
@Suite struct UnnamableFileTests {
    @Test func fileNameDecodesOnlyUTF8AndShowsEveryByte() {
        #expect(FileName.decode(Array("café".utf8)) == "café")
        #expect(FileName.decode([0x63, 0x61, 0x66, 0xE9]) == nil)
        #expect(FileName.shown([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x74]) == #"caf\xE9.t"#)
        #expect(FileName.shown([0xC0, 0xAF, 0x61]) == #"\xC0\xAF"# + "a")
        #expect(FileName.shown([0x61, 0xE2, 0x82]) == #"a\xE2\x82"#)
        #expect(FileName.shown(Array("é\u{9D}\u{202E}\u{1B}\u{200B}".utf8)) == #"é\u{9D}\u{202E}\u{1B}"# + "\u{200B}")
        #expect(FileName.isHidden("\u{85}") && FileName.isHidden("\u{7F}") && FileName.isHidden("\u{2067}"))
        #expect(!FileName.isHidden("\u{200B}") && !FileName.isHidden("\u{A0}") && !FileName.isHidden("é"))
    }

    /// Makes `name` (bytes, relative to the tree) holding "x".
    static func make(_ tree: TempTree, _ name: [UInt8]) {
        var path = Array(tree.root.utf8) + [UInt8(ascii: "/")] + name
        if let slash = path.lastIndex(of: UInt8(ascii: "/")) {
            let directory = Array(path[..<slash]) + [0]
            _ = directory.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }
        }
        path.append(0)
        let fd = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) } }
        #expect(fd >= 0)
        _ = write(fd, "x", 1)
        close(fd)
    }

    @Test func theScannerReportsWhatItCannotNameAndExcludesMatchTheirBytes() throws {
        let tree = try TempTree()
        defer { _ = try? Process.run(URL(fileURLWithPath: "/bin/rm"), arguments: ["-rf", tree.root]).waitUntilExit() }
        try tree.write("src/ok.txt", "a")
        Self.make(tree, Array("src/caf".utf8) + [0xE9] + Array(".txt".utf8))
        Self.make(tree, Array("src/d".utf8) + [0xFF] + Array("/x.txt".utf8))
        let scanner = SourceScanner(root: tree.root)
        let scan = scanner.scan(matching: ["src/**"])
        #expect(scan.files.map(\.path) == ["src/ok.txt"])
        #expect(scan.unnamable == [#"src/caf\xE9.txt"#, #"src/d\xFF/x.txt"#])
        #expect(scanner.scan(matching: ["src"]).unnamable.count == 2)
        #expect(scanner.scan(matching: ["src/**", "!src/caf?.txt", "!src/d?/**"]).unnamable.isEmpty)
        #expect(scanner.scan(matching: ["src/*.txt", "src/**"]).unnamable.count == 2)
        #expect(scanner.files(matching: ["src/*"]).map(\.path) == ["src/ok.txt"])
        #expect(scanner.exists("src/caf*"))
    }

    @Test func aDepfileNameThatIsNotUTF8IsMalformed() {
        let text = Array("o: a.h \\\n b".utf8) + [0xE9] + Array(".h\n".utf8)
        #expect(throws: Depfile.Malformed(line: 2, message: #"the name 'b\xE9.h' is not UTF-8"#)) { try Depfile.parse(text) }
    }
}
