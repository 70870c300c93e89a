import MoonDocument
import Testing
@testable import MoonGraph

/// The test builder must print the text it claims to, with the spans the loader would report.
@Suite struct YAMLBuilderTests {
    @Test func printsBlockYAMLWithSpans() {
        let (text, root) = YAMLLayout.render([
            "version": 1,
            "nodes": ["a": ["run": "echo hi", "needs": ["b", "c"]]],
        ])
        #expect(text == """
        version: 1
        nodes:
          a:
            run: echo hi
            needs: [b, c]

        """)
        let a = root.pairs![1].value.pairs![0]
        #expect(a.key.span.start.line == 3 && a.key.span.start.column == 3)
        let needs = a.value.pairs![1].value
        #expect(needs.span.start.column == 12)
        #expect(needs.items![1].span.start.line == 5 && needs.items![1].span.start.column == 16)
    }

    @Test func quotesWhatPlainCannotHold() {
        let (text, _) = YAMLLayout.render(["a": "x: y", "b": .quoted("4"), "c": .null, "d": [:]])
        #expect(text == "a: \"x: y\"\nb: \"4\"\nc: ~\nd: {}\n")
    }
}
