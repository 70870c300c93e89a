import Foundation
import Testing

/// `make test` ends a failed run with scripts/test-failures.sh, because CI
/// keeps only the log's tail: the failed tests must come first, and a
/// compiler warning that mentions "error" must never stand in for them.
@Suite struct TestSummaryTests {
    let script = Moon.root.appendingPathComponent("scripts/test-failures.sh").path

    @Test func failedTestsAndTheirExpectationsComeFirstAndWarningsNever() throws {
        let moon = try Moon(graph: "nodes: {}\n")
        try moon.write("test.log", """
        /src/A.swift:3:9: warning: capture of 'x' with non-sendable type; this is an error in the Swift 6 language mode
          |         `- warning: capture; this is an error in the Swift 6 language mode
        Build complete! (1.0s)
        ✔ Test passes() passed after 0.001 seconds.
        ✘ Test watchRerunsAfterALateEdit() recorded an issue at WatchTests.swift:40:9: Expectation failed: (runs → 1) == 2
        ↳ the edit after graph-complete was lost
        ✘ Test watchRerunsAfterALateEdit() failed after 3.2 seconds with 1 issue.
        ✘ Test run with 2 tests in 1 suite failed after 3.2 seconds with 1 issue.

        """)
        let result = try shell("'\(script)' test.log", in: moon)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "--- failed tests (1):")
        #expect(lines.dropFirst().first == "  watchRerunsAfterALateEdit()")
        #expect(result.stdout.contains("Expectation failed: (runs → 1) == 2"))
        #expect(result.stdout.contains("the edit after graph-complete was lost"))
        #expect(!result.stdout.contains("warning"))
        #expect(!result.stdout.contains("Test run with"))
    }

    @Test func aBrokenBuildShowsTheCompilerErrorsWithoutTheWarnings() throws {
        let moon = try Moon(graph: "nodes: {}\n")
        try moon.write("test.log", """
        /src/A.swift:3:9: warning: capture of 'x'; this is an error in the Swift 6 language mode
        /src/B.swift:7:1: error: cannot find 'y' in scope
        error: fatalError

        """)
        let result = try shell("'\(script)' test.log", in: moon)
        #expect(result.stdout.contains("/src/B.swift:7:1: error: cannot find 'y' in scope"))
        #expect(!result.stdout.contains("A.swift"))
    }
}
