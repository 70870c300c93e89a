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
        let diagnostics = graph.loadDotenv { files[$0].map { Array($0.utf8) } }
        #expect(graph.dotenvValues["A"] == "1" && graph.dotenvValues["B"] == "3")
        #expect(diagnostics.map(\.message) == ["cannot read dotenv file 'dir/missing.env'"])
    }

    @Test func anOptionalMissingFileIsSkipped() {
        var graph = Graph(name: "g", path: "moon.yaml", nodes: [])
        graph.dotenv = [DotenvFile(path: ".env.local", optional: true)]
        #expect(graph.loadDotenv { _ in nil }.isEmpty)
    }
}
