import Testing
import MoonDocument

@Suite struct DiagnosticRendererTests {
    let source = SourceFile(path: "graph.yaml", text: """
        version: 1
        nodes:
          build:
            run: make
          deploy:
        \tneeds: [biuld]
            run: ./deploy.sh
        """)

    func span(_ line: Int, _ column: Int, _ endColumn: Int, endLine: Int? = nil) -> SourceSpan {
        SourceSpan(file: "graph.yaml",
                   start: SourceLocation(line: line, column: column, offset: 0),
                   end: SourceLocation(line: endLine ?? line, column: endColumn, offset: 0))
    }

    @Test func rendersTheDesignExample() {
        let file = SourceFile(path: "graph.yaml", text: String(repeating: "\n", count: 11) + "    needs: [biuld]\n")
        let diagnostic = Diagnostic.error("node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)", at: span(12, 13, 18))
        #expect(DiagnosticRenderer().render(diagnostic, source: file) == """
            graph.yaml:12:13: error: node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)
               12 |     needs: [biuld]
                  |             ^~~~~

            """)
    }

    /// Copies of one problem found in several nodes at one place (an
    /// anchor's text) become one, naming the nodes; a problem of one node,
    /// or at another place, stays as it is; the count follows.
    @Test func copiesOfAnAnchorsProblemAreMergedNamingTheNodes() {
        func tagged(_ d: Diagnostic, _ node: String) -> Diagnostic {
            var d = d
            d.node = node
            return d
        }
        let names = (1...10).map { "test-\($0)" }
        var diagnostics = names.map {
            tagged(.error("unknown key 'timout' in node '\($0)' (did you mean 'timeout'?)", at: span(6, 2, 8), notes: ["valid keys: run"]), $0)
        }
        diagnostics += names.map { tagged(.error("node '\($0)' needs unknown node 'biuld'", at: span(6, 10, 15)), $0) }
        diagnostics.append(tagged(.error("unknown key 'runn' in node 'build'", at: span(4, 5, 9)), "build"))
        diagnostics.append(tagged(.error("unknown key 'runn' in node 'deploy'", at: span(7, 5, 9)), "deploy"))
        let merged = DiagnosticRenderer.merged(diagnostics)
        #expect(merged.map(\.message) == [
            "unknown key 'timout' (did you mean 'timeout'?) (in 10 nodes: test-1, test-2, test-3, test-4, test-5, test-6, test-7, test-8, …)",
            "node 'test-1' needs unknown node 'biuld' (in 10 nodes: test-1, test-2, test-3, test-4, test-5, test-6, test-7, test-8, …)",
            "unknown key 'runn' in node 'build'",
            "unknown key 'runn' in node 'deploy'",
        ])
        #expect(merged[0].notes == ["valid keys: run"])
        #expect(DiagnosticRenderer.summary(of: diagnostics, path: "graph.yaml") == "4 errors in graph.yaml")
        #expect(DiagnosticRenderer().render(diagnostics, source: source).components(separatedBy: "error:").count == 5)
    }

    /// A long line (minified, or hostile: 100,000 brackets) is quoted as a
    /// window of `excerptWidth` characters around the span, cut with `…`,
    /// the caret still under the span's character.
    @Test func longLinesAreCutToAWindowAroundTheSpan() {
        let text = String(repeating: "a", count: 150) + "XYZ" + String(repeating: "b", count: 1000)
        let file = SourceFile(path: "graph.yaml", text: text + "\n")
        let rendered = DiagnosticRenderer().render(.error("here", at: span(1, 151, 154)), source: file)
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let quoted = lines[1], caret = lines[2]
        #expect(quoted.hasPrefix("    1 | …a") && quoted.hasSuffix("b…"))
        #expect(quoted.count == "    1 | ".count + DiagnosticRenderer.excerptWidth + 2)
        let at = quoted.distance(from: quoted.startIndex, to: quoted.firstIndex(of: "X")!)
        #expect(caret.distance(from: caret.startIndex, to: caret.firstIndex(of: "^")!) == at)
        #expect(caret.hasSuffix("^~~"))
        // Near either end, only the other end is cut.
        let early = DiagnosticRenderer().render(.error("here", at: span(1, 2, 3)), source: file)
        #expect(early.contains("    1 | aa") && early.contains("a…\n"))
        let late = DiagnosticRenderer().render(.error("here", at: span(1, 1150, 1151)), source: file)
        #expect(late.contains("    1 | …b") && late.contains("bbb\n"))
        // The width is in terminal cells: wide characters count twice.
        let wide = SourceFile(path: "graph.yaml", text: String(repeating: "漢", count: 300) + "\n")
        let cut = DiagnosticRenderer().render(.error("here", at: span(1, 150, 151)), source: wide)
        let shown = cut.split(separator: "\n")[1].dropFirst("    1 | …".count).dropLast()
        #expect(shown.count == DiagnosticRenderer.excerptWidth / 2)
        #expect(cut.split(separator: "\n")[2].hasSuffix(String(repeating: " ", count: 1 + 2 * (DiagnosticRenderer.excerptWidth / 3 / 2)) + "^~"))
    }

    @Test func tabsStayAlignedAndNotesFollow() {
        let diagnostic = Diagnostic.error("unknown node 'biuld'", at: span(6, 10, 15),
                                          notes: ["help: did you mean 'build'?", "defined here"])
        #expect(DiagnosticRenderer().render(diagnostic, source: source) == """
            graph.yaml:6:10: error: unknown node 'biuld'
                6 | \tneeds: [biuld]
                  | \t        ^~~~~
                  = help: did you mean 'build'?
                  = note: defined here

            """)
    }

    @Test func emptySpanGetsACaretOnly() {
        let diagnostic = Diagnostic(.warning, "odd", at: span(1, 10, 10))
        #expect(DiagnosticRenderer().render(diagnostic, source: source) == """
            graph.yaml:1:10: warning: odd
                1 | version: 1
                  |          ^

            """)
    }

    @Test func multiLineSpanUnderlinesToTheEndOfItsFirstLine() {
        let diagnostic = Diagnostic.error("bad node", at: span(3, 3, 1, endLine: 5))
        #expect(DiagnosticRenderer().render(diagnostic, source: source) == """
            graph.yaml:3:3: error: bad node
                3 |   build:
                  |   ^~~~~~

            """)
    }

    @Test func withoutSpanOrWithoutSource() {
        let noSpan = Diagnostic.error("the file is empty", at: nil, notes: ["note: add `version: 1`"])
        #expect(DiagnosticRenderer().render(noSpan, source: source) == """
            graph.yaml: error: the file is empty
                  = note: add `version: 1`

            """)
        let elsewhere = Diagnostic.error("x", at: span(1, 1, 2))
        #expect(DiagnosticRenderer().render(elsewhere, source: nil) == "graph.yaml:1:1: error: x\n")
    }

    @Test func colorAddsANSIAndNoColorHasNone() {
        let diagnostic = Diagnostic.error("boom", at: span(1, 1, 8), notes: ["help: fix it"])
        let plain = DiagnosticRenderer(color: false).render(diagnostic, source: source)
        #expect(!plain.contains("\u{1B}"))
        let colored = DiagnosticRenderer(color: true).render(diagnostic, source: source)
        #expect(colored == """
            \u{1B}[1mgraph.yaml:1:1:\u{1B}[0m \u{1B}[1;31merror:\u{1B}[0m \u{1B}[1mboom\u{1B}[0m
                1 | version: 1
                  | \u{1B}[1;31m^~~~~~~\u{1B}[0m
                  = \u{1B}[1mhelp:\u{1B}[0m fix it

            """)
        let warning = DiagnosticRenderer(color: true).render(Diagnostic(.warning, "w", at: nil), source: source)
        #expect(warning.contains("\u{1B}[1;33mwarning:\u{1B}[0m"))
    }

    @Test func controlCharactersFromTheFileAreNeutralised() {
        let hostile = SourceFile(path: "h.yaml", text: "a: \u{1B}[31mred\n")
        let diagnostic = Diagnostic.error("key '\u{1B}[2J'", at: SourceSpan(file: "h.yaml",
            start: SourceLocation(line: 1, column: 4, offset: 3), end: SourceLocation(line: 1, column: 5, offset: 4)))
        let text = DiagnosticRenderer(color: false).render(diagnostic, source: hostile)
        #expect(!text.contains("\u{1B}"))
        #expect(text.contains("\u{FFFD}[31mred"))
    }

    @Test func wideCharactersShiftTheCaret() {
        let file = SourceFile(path: "w.yaml", text: "名前: x\n")
        let diagnostic = Diagnostic.error("here", at: SourceSpan(file: "w.yaml",
            start: SourceLocation(line: 1, column: 5, offset: 8), end: SourceLocation(line: 1, column: 6, offset: 9)))
        #expect(DiagnosticRenderer().render(diagnostic, source: file).hasSuffix("  |       ^\n"))
    }

    @Test func listIsSortedByPosition() {
        let list = [
            Diagnostic.error("third", at: span(4, 5, 8)),
            Diagnostic.error("second", at: span(1, 1, 2)),
            Diagnostic.error("first", at: nil),
            Diagnostic(.warning, "also second", at: span(1, 1, 2)),
        ]
        let text = DiagnosticRenderer().render(list, source: source)
        let headers = text.split(separator: "\n").filter { $0.hasPrefix("graph.yaml") }
        #expect(headers == [
            "graph.yaml: error: first",
            "graph.yaml:1:1: error: second",
            "graph.yaml:1:1: warning: also second",
            "graph.yaml:4:5: error: third",
        ])
    }

    @Test func summaries() {
        let e = Diagnostic.error("e", at: nil)
        let w = Diagnostic(.warning, "w", at: nil)
        let n = Diagnostic(.note, "n", at: nil)
        #expect(DiagnosticRenderer.summary(of: [e, e], path: "graph.yaml") == "2 errors in graph.yaml")
        #expect(DiagnosticRenderer.summary(of: [e], path: "graph.yaml") == "1 error in graph.yaml")
        #expect(DiagnosticRenderer.summary(of: [e, w, n], path: "g.yaml") == "1 error and 1 warning in g.yaml")
        #expect(DiagnosticRenderer.summary(of: [w, w], path: "g.yaml") == "2 warnings in g.yaml")
        #expect(DiagnosticRenderer.summary(of: [], path: "g.yaml") == "no problems in g.yaml")
    }

    @Test func renderingALoaderError() {
        let file = SourceFile(path: "graph.yaml", text: "version: 1\nnodes:\n  a: {run: x}\n  a: {run: y}\n")
        var rendered = ""
        do {
            _ = try YAMLLoader.load(file)
        } catch {
            rendered = DiagnosticRenderer().render(error.items, source: file)
        }
        #expect(rendered == """
            graph.yaml:4:3: error: duplicate key 'a' in this mapping
                4 |   a: {run: y}
                  |   ^
                  = note: first defined at line 3, column 3
                  = help: keys of one mapping must differ (YAML readers disagree on which one wins): remove or rename one

            """)
    }
}
