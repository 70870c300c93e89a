import Foundation
import Testing
@testable import MoonGraph

@Suite struct DotenvTests {
    @Test func readsTheCommonForms() {
        let (values, problems) = Dotenv.parse("""
            # a comment
            A=1
            export B = two words   # comment
              C='single $X # kept'
            D="line\\nnext \\"q\\" \\\\"
            E=
            F=a#b
            G="multi
            line"
            H='x' # after
            """)
        #expect(problems == [])
        #expect(values.names == ["A", "B", "C", "D", "E", "F", "G", "H"])
        #expect(values["B"] == "two words")
        #expect(values["C"] == "single $X # kept")
        #expect(values["D"] == "line\nnext \"q\" \\")
        #expect(values["E"] == "")
        #expect(values["F"] == "a#b")
        #expect(values["G"] == "multi\nline")
        #expect(values["H"] == "x")
    }

    @Test func reportsBadLinesWithTheirPlace() {
        let (values, problems) = Dotenv.parse("OK=1\nnot a line\n1X=2\nQ=\"open\n")
        #expect(values.names == ["OK"])
        #expect(problems.map(\.line) == [2, 3, 4])
        #expect(problems[0].message == "expected KEY=VALUE, found 'not a line'")
        #expect(problems[1].message.hasPrefix("invalid variable name '1X'"))
        #expect(problems[2].message == "unclosed double quote in the value of 'Q'")
    }

    @Test func loadsFilesRelativeToTheGraphLaterOverEarlier() {
        var graph = Graph(name: "g", path: "dir/moon.yaml", nodes: [])
        graph.dotenv = [DotenvFile(path: ".env"), DotenvFile(path: ".env.local", optional: true), DotenvFile(path: "missing.env")]
        let files = ["dir/.env": "A=1\nB=2\n", "dir/.env.local": "B=3\n"]
        let diagnostics = graph.loadDotenv { files[$0].map { .success(Array($0.utf8)) } ?? .failure(DotenvReadFailure(reason: "", missing: true)) }
        #expect(graph.dotenvValues["A"] == "1" && graph.dotenvValues["B"] == "3")
        #expect(diagnostics.map(\.message) == ["cannot read dotenv file 'dir/missing.env': it does not exist"])
    }

    @Test func anOptionalMissingFileIsSkipped() {
        var graph = Graph(name: "g", path: "moon.yaml", nodes: [])
        graph.dotenv = [DotenvFile(path: ".env.local", optional: true)]
        #expect(graph.loadDotenv { _ in .failure(DotenvReadFailure(reason: "", missing: true)) }.isEmpty)
    }

    /// A file that exists but cannot be read is an error even when optional,
    /// with the reader's reason and no "create it" advice.
    @Test func anUnreadableFileIsAnErrorEvenWhenOptional() {
        var graph = Graph(name: "g", path: "moon.yaml", nodes: [])
        graph.dotenv = [DotenvFile(path: "/dev/zero", optional: true)]
        let diagnostics = graph.loadDotenv { _ in .failure(DotenvReadFailure(reason: "/dev/zero is a character device")) }
        #expect(diagnostics.map(\.message) == ["cannot read dotenv file '/dev/zero': /dev/zero is a character device"])
        #expect(diagnostics.allSatisfy { $0.notes.isEmpty }, "no \"create it\" advice")
    }

    /// Lines end at LF or CRLF; a multi-line quoted value keeps LF between
    /// its lines; invalid UTF-8 in a value becomes U+FFFD; a key is ASCII.
    @Test func bytesAndLineEnds() {
        let (values, problems) = Dotenv.parse(Array("A=1\r\nB=\"x\r\ny\"\r\nC=caf\u{E9}\n".utf8) + [0x44, 0x3D, 0xFF, 0x0A] + Array("\u{E9}=1\n".utf8))
        #expect(values["A"] == "1")
        #expect(values["B"] == "x\ny")
        #expect(values["C"] == "caf\u{E9}")
        #expect(values["D"] == "\u{FFFD}")
        #expect(problems.map(\.line) == [6])
    }

    /// Linear and quick: a 10 MB value and 100,000 keys.
    @Test func largeFilesParseQuickly() {
        let started = Date()
        let big = "V=\"" + String(repeating: "abcdefghij", count: 1_000_000) + "\"\n"
        #expect(Dotenv.parse(big).values["V"]?.utf8.count == 10_000_000)
        var many = ""
        for i in 0..<100_000 { many += "K\(i)=value \(i) # comment\n" }
        let parsed = Dotenv.parse(many)
        #expect(parsed.values.count == 100_000 && parsed.values["K99999"] == "value 99999")
        #expect(Date().timeIntervalSince(started) < 30, "\(Date().timeIntervalSince(started))s")
    }
}
