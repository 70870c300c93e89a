import Foundation
import MoonCommand
import Testing
@testable import MoonReport
import MoonEvents
import MoonGraph

@Suite struct TTYReporterTests {
    struct Harness {
        let capture = CapturedSink()
        let clock = TestClock(Fixture.t0)
        let reporter: TTYReporter

        init(width: Int = 80, rows: Int = 24, color: Bool = true, verbosity: Verbosity = .normal, mode: NodeOutputMode = .prefixed,
             stallAfter: Duration = .seconds(30)) {
            let clock = self.clock
            reporter = TTYReporter(sink: capture.sink,
                                   options: TTYReporter.Options(verbosity: verbosity, outputMode: mode, color: color, stallAfter: stallAfter),
                                   clock: { clock.now }, size: { TerminalSize(columns: width, rows: rows) })
        }

        /// Feeds events at their own times, redrawing every 100ms of test time.
        func play(_ events: [RunEvent]) {
            var lastDraw = Fixture.t0
            for event in events {
                while event.time.timeIntervalSince(lastDraw) >= 0.1 {
                    lastDraw = lastDraw.addingTimeInterval(0.1)
                    clock.now = lastDraw
                    reporter.redraw()
                }
                clock.now = event.time
                reporter.report(event)
            }
        }
    }

    @Test func eventsAloneWriteNothingTheRedrawWritesThemAll() {
        let h = Harness()
        for event in Fixture.failingRun.prefix(5) { h.reporter.report(event) }
        #expect(h.capture.text.isEmpty, "a reporter must not write per event")
        h.clock.advance(ms: 100)
        h.reporter.redraw()
        let text = h.capture.text
        #expect(text.contains("build  │ \u{1B}[0mCompiling moon (12 files)\n"), "prefixes padded to the longest name")
        #expect(text.contains("fetch  │ \u{1B}[0mcurl: (22) 503 Service Unavailable\n"))
        #expect(text.contains("[0/5]"))
    }

    /// The redraw timer on virtual time: a flood of 2000 lines over half a
    /// second of the scheduler's clock is drawn in at most one frame per
    /// 100 ms tick, and every line arrives whole.
    @Test func timerRedrawsAtMostTenTimesASecond() {
        let scheduler = TestScheduler(startDate: Fixture.t0)
        // The one place the test moves virtual time.
        func advance(milliseconds: Int) { scheduler.advance(by: .milliseconds(milliseconds)) }
        let capture = CapturedSink()
        let reporter = TTYReporter(sink: capture.sink, options: TTYReporter.Options(color: false, refreshInterval: .milliseconds(100)),
                                   scheduler: scheduler, clock: { scheduler.now }, size: { TerminalSize(columns: 80, rows: 24) })
        reporter.report(RunEvent(time: scheduler.now, kind: .graphStart(graph: "g", nodes: ["a"], queues: [])))
        reporter.report(RunEvent(time: scheduler.now, kind: .start(node: "a", queue: "default", attempt: 1, command: "")))
        #expect(capture.text.isEmpty, "nothing is drawn before the first tick")
        // A flood of output: 2000 lines, four every millisecond, for 500 ms.
        for i in 0..<2000 {
            reporter.report(RunEvent(time: scheduler.now, kind: .next(node: "a", stream: .stdout, text: "line \(i)", continued: false)))
            if i % 4 == 3 { advance(milliseconds: 1) }
        }
        advance(milliseconds: 250)
        let framesBeforeFinish = capture.text.components(separatedBy: "[0/1]").count - 1
        reporter.finish()
        let text = capture.text
        // 750 ms of virtual time: seven ticks, and a tick with nothing new draws nothing.
        #expect(framesBeforeFinish >= 5, "the status area was drawn while lines came: \(framesBeforeFinish) frames")
        #expect(framesBeforeFinish <= 7, "\(framesBeforeFinish) frames in 750 ms")
        #expect(scheduler.pendingCount == 0, "finish stops the timer")
        #expect(text.contains("a │ line 1999\n"))
        #expect(text.components(separatedBy: "a │ line ").count - 1 == 2000, "every line whole, none lost")
    }

    @Test func statusAreaLinesFitTheWidth() {
        for width in [12, 20, 40, 80, 200] {
            let h = Harness(width: width)
            h.play(Array(Fixture.failingRun.prefix(13)))
            let ledger = ledgerOf(Array(Fixture.failingRun.prefix(13)))
            let area = StatusArea(width: width, maxLines: 6, stallAfterMilliseconds: 30_000)
            for line in area.lines(ledger, now: Fixture.t0.addingTimeInterval(2)) {
                #expect(line.columns <= width - 1, "\(line.plain) is wider than \(width)")
            }
            #expect(area.compactLine(ledger, now: Fixture.t0).columns <= width - 1)
        }
    }

    @Test func statusAreaContent() {
        let ledger = ledgerOf(Array(Fixture.failingRun.prefix(13)))
        let area = StatusArea(width: 80, maxLines: 6, stallAfterMilliseconds: 30_000)
        let lines = area.lines(ledger, now: Fixture.t0.addingTimeInterval(1.5)).map(\.plain)
        #expect(lines == [
            "[2/5] 1.5s · 2 running",
            "  test  default  0.2s",
            "  lint  default  0.2s",
        ])
        let compact = area.compactLine(ledger, now: Fixture.t0.addingTimeInterval(1.5)).plain
        #expect(compact == "[2/5] 1.5s · 2 running · test 0.2s, lint 0.2s")
    }

    @Test func retriedNodeShowsItsAttemptAndFailuresAreCounted() {
        let ledger = ledgerOf(Array(Fixture.failingRun.prefix(7)) + [Fixture.failingRun[13]])
        let lines = StatusArea(width: 80, maxLines: 6, stallAfterMilliseconds: 0).lines(ledger, now: Fixture.t0.addingTimeInterval(0.3)).map(\.plain)
        #expect(lines[1] == "  build  default  0.2s")
        #expect(lines[2] == "  fetch  net      0.1s (attempt 2)")
    }

    @Test func tooManyRunningNodesAreCounted() {
        var events = [Fixture.at(0, .graphStart(graph: "g", nodes: (1...9).map { "n\($0)" }, queues: []))]
        for i in 1...9 { events.append(Fixture.at(i, .start(node: "n\(i)", queue: "default", attempt: 1, command: ""))) }
        let lines = StatusArea(width: 80, maxLines: 4, stallAfterMilliseconds: 0).lines(ledgerOf(events), now: Fixture.t0).map(\.plain)
        #expect(lines.count == 4)
        #expect(lines.last == "  … 7 more running")
    }

    @Test func silentNodeIsMarkedStalled() {
        let events = [
            Fixture.at(0, .graphStart(graph: "g", nodes: ["talks", "silent"], queues: [])),
            Fixture.at(0, .start(node: "talks", queue: "default", attempt: 1, command: "")),
            Fixture.at(0, .start(node: "silent", queue: "default", attempt: 1, command: "")),
            Fixture.at(4_500, .next(node: "talks", stream: .stdout, text: "still here", continued: false)),
        ]
        let area = StatusArea(width: 80, maxLines: 6, stallAfterMilliseconds: 3_000)
        let lines = area.lines(ledgerOf(events), now: Fixture.t0.addingTimeInterval(5)).map(\.plain)
        #expect(lines[1] == "  talks   default  5.0s")
        #expect(lines[2] == "  silent  default  5.0s  stalled: no output for 5.0s")
        #expect(area.compactLine(ledgerOf(events), now: Fixture.t0.addingTimeInterval(5)).plain.contains("silent 5.0s (stalled)"))
    }

    /// Bytes of a line still being written count as output (progress dots
    /// are not a stall), and the row shows the line so far: after its last
    /// `\r` (a progress bar), cleaned, cut to the width.
    @Test func aLineBeingWrittenShowsInItsRowAndIsNoStall() {
        func partial(_ ms: Int, _ node: String, _ text: String) -> RunEvent {
            var event = Fixture.at(ms, .next(node: node, stream: .stdout, text: text, continued: true))
            event.partial = true
            return event
        }
        var events = [
            Fixture.at(0, .graphStart(graph: "g", nodes: ["dots", "bar", "silent"], queues: [])),
            Fixture.at(0, .start(node: "dots", queue: "default", attempt: 1, command: "")),
            Fixture.at(0, .start(node: "bar", queue: "default", attempt: 1, command: "")),
            Fixture.at(0, .start(node: "silent", queue: "default", attempt: 1, command: "")),
            partial(4_000, "dots", "......"),
            partial(4_800, "bar", " 10% [=    ]\r 55% [\u{1B}]0;TITLE\u{07}=====\u{9D}]\r"),
        ]
        let area = StatusArea(width: 80, maxLines: 6, stallAfterMilliseconds: 3_000)
        var lines = area.lines(ledgerOf(events), now: Fixture.t0.addingTimeInterval(5)).map(\.plain)
        #expect(lines[1] == "  dots    default  5.0s  │ ......")
        #expect(lines[2] == "  bar     default  5.0s  │  55% [=====]")
        #expect(lines[3] == "  silent  default  5.0s  stalled: no output for 5.0s")
        // Narrow: the row is cut, never wrapped.
        let narrow = StatusArea(width: 24, maxLines: 6, stallAfterMilliseconds: 3_000).lines(ledgerOf(events), now: Fixture.t0.addingTimeInterval(5))
        #expect(narrow.allSatisfy { $0.columns <= 23 })
        // The line ends: it goes into the output as usual, the row is plain again.
        events.append(Fixture.at(4_900, .next(node: "dots", stream: .stdout, text: "...... done", continued: false)))
        lines = area.lines(ledgerOf(events), now: Fixture.t0.addingTimeInterval(5)).map(\.plain)
        #expect(lines[1] == "  dots    default  5.0s")
        // Partial lines never reach the plain log or the event stream.
        let plain = PlainReporterTests().render(events)
        #expect(!plain.contains("│ ......\n") && plain.contains("dots │ ...... done"))
        let capture = CapturedSink()
        let json = JSONLinesReporter(sink: capture.sink)
        for event in events { json.report(event) }
        #expect(capture.text.split(separator: "\n").count == events.count - 2, "\(capture.text)")
        #expect(capture.text.contains("\"seq\":5,") && !capture.text.contains("\"seq\":7,"))
    }

    @Test func stalledUsesTheConfiguredTime() {
        let h = Harness(width: 80, stallAfter: .seconds(2))
        h.play(Array(Fixture.passingRun.prefix(3)))
        h.clock.advance(ms: 2500)
        h.reporter.redraw()
        let screen = TextWidth.sanitize(h.capture.text, keepColor: false)
        #expect(screen.contains("  two  default  2.5s  stalled: no output for 2.5s"), "\(screen)")
    }

    @Test func colourOffMeansNoEscapeSequences() {
        let h = Harness(color: false, verbosity: .verbose)
        var events = Fixture.failingRun
        events.insert(Fixture.at(50, .next(node: "build", stream: .stdout, text: "\u{1B}[1;32mgreen\u{1B}[0m \u{1B}]0;title\u{07}", continued: false)), at: 3)
        h.play(events)
        h.reporter.finish()
        let text = h.capture.text
        #expect(!text.contains("\u{1B}"))
        #expect(text.contains("build  │ green \n"))
        #expect(text.contains("[0/5]"), "the one-line status was drawn")
        // The status line is erased with blanks, and the screen ends with the summary.
        #expect(text.hasSuffix("moon: FAILED - 2 succeeded, 1 failed, 1 skipped, 1 canceled in 1.5s\n"))
    }

    @Test func colourOnStylesPrefixesWithTheNodesColour() {
        let h = Harness(color: true)
        h.play(Fixture.passingRun)
        let text = h.capture.text
        #expect(text.contains("\u{1B}[\(Style.node("one").sgr)mone   │ \u{1B}[0mhello\n"))
        #expect(text.contains("\u{1B}[32m✓ \u{1B}[0m\u{1B}[1mone\u{1B}[0m"))
    }

    @Test func endsWithACleanScreen() {
        let h = Harness(width: 60, color: true)
        h.play(Fixture.failingRun)
        h.reporter.finish()
        let text = h.capture.text
        // The last status frame is erased (cursor up over it, clear to the end) before the summary.
        guard let erase = text.range(of: "\r\u{1B}[2A\u{1B}[J", options: .backwards) else {
            Issue.record("no erase of the status area")
            return
        }
        let after = String(text[erase.upperBound...])
        #expect(!after.contains("[5/5]") && !after.contains("running"))
        #expect(after.contains("moon: \u{1B}[0m\u{1B}[1;31mFAILED"))
        h.reporter.redraw()
        #expect(h.capture.text == text, "nothing drawn after the end")
    }

    @Test func groupedModeKeepsEachNodesOutputTogether() {
        let h = Harness(color: false, mode: .grouped)
        let events = [
            Fixture.at(0, .graphStart(graph: "g", nodes: ["a", "b"], queues: [])),
            Fixture.at(1, .start(node: "a", queue: "default", attempt: 1, command: "")),
            Fixture.at(1, .start(node: "b", queue: "default", attempt: 1, command: "")),
            Fixture.at(2, .next(node: "a", stream: .stdout, text: "a1", continued: false)),
            Fixture.at(3, .next(node: "b", stream: .stdout, text: "b1", continued: false)),
            Fixture.at(4, .next(node: "a", stream: .stdout, text: "a2", continued: false)),
            Fixture.at(5, .complete(node: "b", durationMilliseconds: 4, exitCode: 0, outputs: [])),
            Fixture.at(6, .complete(node: "a", durationMilliseconds: 5, exitCode: 0, outputs: [])),
            Fixture.at(7, .graphComplete(ok: true, durationMilliseconds: 7, counts: Fixture.counts(2, 0, 0, 0), criticalPath: ["a"])),
        ]
        h.play(events)
        #expect(h.capture.text.contains("b │ b1\n✓ b 4ms\na │ a1\na │ a2\n✓ a 5ms\n"))
    }

    @Test func narrowTerminalCutsStatusButNotOutput() {
        let h = Harness(width: 20, color: false)
        h.play(Array(Fixture.failingRun.prefix(13)))
        h.clock.advance(ms: 100)
        h.reporter.redraw()
        let text = h.capture.text
        #expect(text.contains("build  │ Compiling moon (12 files)\n"))
        for frame in text.components(separatedBy: "\r") where frame.hasPrefix("[") {
            #expect(TextWidth.columns(frame) <= 19, "\(frame)")
        }
    }

    @Test func replayedTimesAreTheRecordedOnes() {
        // Events from long ago: elapsed times come from their timestamps, not the wall clock.
        let h = Harness(color: false)
        h.clock.now = Date()
        for event in Fixture.failingRun.prefix(2) { h.reporter.report(event) }
        h.clock.advance(ms: 700)
        h.reporter.redraw()
        #expect(h.capture.text.contains("[0/5] 0.7s · 1 running · fetch 0.7s"))
    }

    func ledgerOf(_ events: [RunEvent]) -> RunLedger {
        var ledger = RunLedger()
        for event in events { ledger.apply(event) }
        return ledger
    }
}

@Suite struct StyleTests {
    @Test func nodeColoursAreStableAndSpread() {
        #expect(Style.node("build") == Style.node("build"))
        // FNV-1a, not the per-process seeded Hasher: the same colour in every run.
        #expect(Style.node("build").sgr == Style.palette[Int(fnv("build") % UInt32(Style.palette.count))].sgr)
        let names = ["build", "test", "lint", "fetch", "deploy", "docs", "package", "notify", "compile", "migrate"]
        #expect(Set(names.map { Style.node($0).sgr }).count >= 5)
        #expect(!names.contains { Style.node($0).sgr == "31" || Style.node($0).sgr == "91" }, "red is for failures")
    }

    func fnv(_ s: String) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in s.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        return h
    }

    @Test func fittingCountsColumnsNotBytes() {
        let line = StyledLine([("日本語テキスト", .bold), (" ok", .none)])
        #expect(line.columns == 17)
        let cut = line.fitted(to: 6)
        #expect(cut.plain == "日本…")
        #expect(cut.columns <= 6)
        #expect(StyledLine("short").fitted(to: 10).plain == "short")
        #expect(StyledLine("abcdef").fitted(to: 0).plain == "")
    }

    @Test func renderingWithoutColourHasNoEscapes() {
        let line = StyledLine([("✓ ", .green), ("build", .bold)])
        #expect(line.rendered(color: false) == "✓ build")
        #expect(line.rendered(color: true) == "\u{1B}[32m✓ \u{1B}[0m\u{1B}[1mbuild\u{1B}[0m")
    }

    @Test func sanitizeRemovesControlSequences() {
        #expect(TextWidth.sanitize("plain text", keepColor: false) == "plain text")
        #expect(TextWidth.sanitize("\u{1B}[31mred\u{1B}[0m", keepColor: false) == "red")
        #expect(TextWidth.sanitize("\u{1B}[31mred", keepColor: true) == "\u{1B}[31mred\u{1B}[0m")
        #expect(TextWidth.sanitize("\u{1B}[2J\u{1B}[Hx\u{1B}[5A", keepColor: true) == "x")
        #expect(TextWidth.sanitize("10%\r50%\r100%", keepColor: false) == "100%")
        #expect(TextWidth.sanitize("a\u{7}b\u{8}c\td", keepColor: false) == "abc\td")
        #expect(TextWidth.sanitize("\u{1B}]0;title\u{7}after", keepColor: true) == "after")
    }

    @Test func durations() {
        #expect(DurationText.format(.milliseconds(0), .measured) == "0ms")
        #expect(DurationText.format(.milliseconds(999), .measured) == "999ms")
        #expect(DurationText.format(.milliseconds(1_299), .measured) == "1.2s")
        #expect(DurationText.format(.milliseconds(59_999), .measured) == "59.9s")
        #expect(DurationText.format(.milliseconds(123_000), .measured) == "2m03s")
        #expect(DurationText.format(.milliseconds(3_723_000), .measured) == "1h02m")
        #expect(DurationText.format(.milliseconds(450), .ticking) == "0.4s")
        #expect(DurationText.format(.milliseconds(61_000), .ticking) == "1m01s")
    }
}

@Suite struct ColorPolicyTests {
    @Test(arguments: [
        (ColorPolicy.Choice.auto, [String: String](), true, true),
        (.auto, [:], false, false),
        (.auto, ["NO_COLOR": "1"], true, false),
        (.auto, ["NO_COLOR": ""], true, true),
        (.auto, ["NO_COLOR": "1", "FORCE_COLOR": "1"], true, false),
        (.auto, ["FORCE_COLOR": "1"], false, true),
        (.auto, ["FORCE_COLOR": "0"], false, false),
        (.auto, ["CLICOLOR_FORCE": "1"], false, true),
        (.auto, ["TERM": "dumb"], true, false),
        (.always, ["NO_COLOR": "1"], false, true),
        (.never, ["FORCE_COLOR": "1"], true, false),
    ])
    func resolves(choice: ColorPolicy.Choice, environment: [String: String], isTerminal: Bool, expected: Bool) {
        #expect(ColorPolicy.resolve(choice, environment: environment, isTerminal: isTerminal).enabled == expected)
    }
}
