import Foundation
import Testing
@testable import MoonReport
import MoonEvents

@Suite struct PlainReporterTests {
    func render(_ events: [RunEvent], verbosity: Verbosity = .normal, mode: NodeOutputMode = .prefixed, finish: Bool = true,
                color: Bool = false) -> String {
        let capture = CapturedSink()
        let reporter = PlainReporter(sink: capture.sink, verbosity: verbosity, outputMode: mode, color: color)
        for event in events { reporter.report(event) }
        if finish { reporter.finish() }
        return capture.text
    }

    @Test func failingRunNormal() {
        Golden.check("plain-failing.txt", render(Fixture.failingRun))
    }

    @Test func failingRunVerbose() {
        Golden.check("plain-failing-verbose.txt", render(Fixture.failingRun, verbosity: .verbose))
    }

    @Test func failingRunQuiet() {
        Golden.check("plain-failing-quiet.txt", render(Fixture.failingRun, verbosity: .quiet))
    }

    @Test func failingRunGrouped() {
        Golden.check("plain-failing-grouped.txt", render(Fixture.failingRun, mode: .grouped))
    }

    @Test func passingRun() {
        Golden.check("plain-passing.txt", render(Fixture.passingRun))
    }

    @Test func cutOffStreamSaysSo() {
        let text = render(Array(Fixture.failingRun.prefix(8)))
        #expect(text.hasSuffix("moon: incomplete - the events end before graph-complete: 0 of 5 nodes finished; still running: build, fetch\n"))
    }

    @Test func noEscapesNoCarriageReturns() {
        var events = Fixture.failingRun
        events.insert(Fixture.at(50, .next(node: "build", stream: .stdout, text: "\u{1B}[1;32mgreen\u{1B}[0m 50%\r100%\u{1B}[2K", continued: false)), at: 3)
        let text = render(events, verbosity: .verbose)
        #expect(!text.contains("\u{1B}"))
        #expect(!text.contains("\r"))
        #expect(text.contains("build │ 100%\n"))
    }

    /// `--color always` / `FORCE_COLOR` into a pipe: the same lines, styled
    /// as on the terminal (prefixes in the node's colour, marks in green and
    /// red, the node's own colours kept), still no cursor movement.
    @Test func colourWhenAskedForStylesTheSameLines() {
        var events = Fixture.failingRun
        events.insert(Fixture.at(50, .next(node: "build", stream: .stdout, text: "\u{1B}[1;32mgreen\u{1B}[0m 50%\r100%", continued: false)), at: 3)
        let coloured = render(events, verbosity: .verbose, color: true)
        let plain = render(events, verbosity: .verbose)
        #expect(coloured.contains("\u{1B}[\(Style.node("build").sgr)mbuild │ \u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[32m✓ \u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[31m✗ \u{1B}[0m"))
        #expect(!coloured.contains("\r"))
        #expect(!coloured.contains("\u{1B}[2K"))
        // Without the escape sequences, it is the plain log.
        let stripped = coloured.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(stripped == plain)
    }

    @Test func quietShowsOnlyFailuresAndSummary() {
        let lines = render(Fixture.failingRun, verbosity: .quiet).split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("✓") || $0.hasPrefix("moon: running") || $0.hasPrefix("critical path") })
        #expect(lines.first == "✗ test 300ms (exit 1)")
        #expect(lines.last == "moon: FAILED - 2 succeeded, 1 failed, 1 skipped, 1 canceled in 1.5s")
    }

    @Test func summaryShowsCommandAndLastTwentyLines() {
        let text = render(Fixture.failingRun)
        #expect(text.contains("✗ test failed (exit 1): exited with code 1\n  $ set -e\n    swift test --parallel\n    echo done\n  … 4 earlier lines\n  test │ Test Case 5 passed\n"))
        #expect(text.contains("  test │ error: testLogin failed: expected 200, got 500\ncritical path: build 1.2s → test 300ms\n"))
        #expect(text.contains("slowest: build 1.2s, fetch 350ms, lint 306ms\n"))
    }

    @Test func timesNormalise() {
        #expect(Golden.normalizeTimes("✓ a 1.2s, b 12ms, c 2m03s, d 1h02m; node2s x") == "✓ a <t>, b <t>, c <t>, d <t>; node2s x")
    }
}
