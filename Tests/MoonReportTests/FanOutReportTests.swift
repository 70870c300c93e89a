import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// What reporters show of fan-outs: instances grouped under their template
/// in the live view, and plain logs and summaries that stay short with
/// hundreds of instances.
@Suite struct FanOutReportTests {
    static func instance(_ i: Int) -> RunEvent.Instance { RunEvent.Instance(template: "process", item: String(format: "f%03d.txt", i)) }
    static func name(_ i: Int) -> String { String(format: "process[f%03d.txt]", i) }

    static func event(_ ms: Int, _ kind: RunEvent.Kind, _ instance: RunEvent.Instance? = nil) -> RunEvent {
        RunEvent(time: Fixture.t0.addingTimeInterval(Double(ms) / 1000), kind: kind, instance: instance)
    }

    /// `shards` lists 300 files; `process` fans out over them; `failing`
    /// of them fail (after a line of output each), the rest succeed; `all`
    /// is a group that needs `after`.
    static func run(instances count: Int = 300, failing: Set<Int> = [], upTo limit: Int? = nil) -> [RunEvent] {
        var e: [RunEvent] = [
            event(0, .graphStart(graph: "fan", nodes: ["shards", "process", "after", "all"], queues: [QueueWidth(name: "default", concurrency: 4)])),
            event(1, .start(node: "shards", queue: "default", attempt: 1, command: "ls")),
            event(10, .complete(node: "shards", durationMilliseconds: 9, exitCode: 0, outputs: [KeyValue("files", "[…]")])),
            event(10, .expand(node: "process", instances: (0..<count).map { name($0) })),
        ]
        for i in 0..<count {
            let name = Self.name(i)
            e.append(event(20 + i * 10, .start(node: name, queue: "default", attempt: 1, command: "wc -l ${{ item }}"), instance(i)))
            e.append(event(21 + i * 10, .next(node: name, stream: .stdout, text: "\(i) lines", continued: false)))
            if failing.contains(i) {
                e.append(event(25 + i * 10, .error(node: name, durationMilliseconds: 5, error: NodeError(.exit, "exited with code 1", exitCode: 1)),
                               instance(i)))
            } else {
                e.append(event(25 + i * 10, .complete(node: name, durationMilliseconds: 5, exitCode: 0, outputs: []), instance(i)))
            }
        }
        let end = 30 + count * 10
        if failing.isEmpty {
            e += [event(end, .complete(node: "process", durationMilliseconds: 0, exitCode: nil, outputs: [])),
                  event(end, .start(node: "after", queue: "default", attempt: 1, command: "true")),
                  event(end + 5, .complete(node: "after", durationMilliseconds: 5, exitCode: 0, outputs: [])),
                  event(end + 5, .complete(node: "all", durationMilliseconds: 0, exitCode: nil, outputs: [])),
                  event(end + 5, .graphComplete(ok: true, durationMilliseconds: end + 5, counts: Fixture.counts(count + 3, 0, 0, 0),
                                                criticalPath: ["shards", name(0), "after"]))]
        } else {
            e += [event(end, .skip(node: "process", reason: .upstreamFailed)),
                  event(end, .skip(node: "after", reason: .upstreamFailed)),
                  event(end, .skip(node: "all", reason: .upstreamFailed)),
                  event(end, .graphComplete(ok: false, durationMilliseconds: end,
                                            counts: Fixture.counts(count + 1 - failing.count, failing.count, 2, 0), criticalPath: ["shards"]))]
        }
        return limit.map { Array(e.prefix($0)) } ?? e
    }

    func plain(_ events: [RunEvent], verbosity: Verbosity = .normal) -> String {
        let capture = CapturedSink()
        let reporter = PlainReporter(sink: capture.sink, verbosity: verbosity)
        for event in events { reporter.report(event) }
        reporter.finish()
        return capture.text
    }

    @Test func theLiveViewGroupsRunningInstancesUnderTheirTemplate() {
        // 40 instances started, 12 of them ended, 4 running at once.
        var events = Array(Self.run().prefix(4))
        for i in 0..<16 {
            events.append(Self.event(20 + i, .start(node: Self.name(i), queue: "default", attempt: 1, command: "wc"), Self.instance(i)))
            if i < 12 {
                events.append(Self.event(30 + i, .complete(node: Self.name(i), durationMilliseconds: 1, exitCode: 0, outputs: []),
                                         Self.instance(i)))
            }
        }
        let capture = CapturedSink()
        let clock = TestClock(Fixture.t0)
        let reporter = TTYReporter(sink: capture.sink, options: TTYReporter.Options(color: true), clock: { clock.now },
                                   size: { TerminalSize(columns: 100, rows: 40) })
        for event in events { reporter.report(event) }
        clock.advance(ms: 100)
        reporter.redraw()
        let text = TextWidth.sanitize(capture.text, keepColor: false)
        #expect(text.contains("[13/304]"), "\(text)")
        #expect(text.contains("process 12/300"), "\(text)")
        #expect(text.contains("4 running"), "\(text)")
        #expect(!text.contains("process[f0"), "instances are not listed one by one:\n\(text)")
        // Without colour, the one-line status groups them too.
        let compact = StatusArea(width: 100, maxLines: 10, stallAfterMilliseconds: 0).compactLine(ledger(events), now: Fixture.t0)
        #expect(compact.plain.contains("process 12/300"), "\(compact.plain)")
    }

    func ledger(_ events: [RunEvent]) -> RunLedger {
        var ledger = RunLedger()
        for event in events { ledger.apply(event) }
        return ledger
    }

    @Test func theLedgerCountsEachTemplatesInstances() {
        let ledger = ledger(Self.run(failing: [7]))
        #expect(ledger.total == 304)
        #expect(ledger.done == 304)
        #expect(ledger.groups["process"]?.total == 300)
        #expect(ledger.groups["process"]?.succeeded == 299)
        #expect(ledger.groups["process"]?.failed == 1)
    }

    @Test func aPlainLogOfThreeHundredInstancesStaysShort() {
        let text = plain(Self.run())
        let lines = text.split(separator: "\n")
        // Each instance's own output stays, attributed to it; its success
        // is counted in the template's line rather than printed.
        #expect(text.contains("process[f007.txt] │ 7 lines"), "\(text)")
        #expect(!text.contains("✓ process[f"), "\(text)")
        #expect(text.contains("✓ process 300/300"), "\(text)")
        #expect(lines.count < 300 + 12, "\(lines.count) lines")
        #expect(text.contains("✓ all\n"), "a group has no time of its own: \(text)")
        #expect(text.hasSuffix("moon: ok - 303 succeeded in 3.0s\n"), "\(text)")
    }

    @Test func verboseShowsEveryInstance() {
        let text = plain(Self.run(instances: 3), verbosity: .verbose)
        #expect(text.contains("✓ process[f002.txt] 5ms"), "\(text)")
        #expect(text.contains("▶ process[f002.txt]: wc -l ${{ item }}"), "\(text)")
    }

    @Test func aFailedInstanceIsShownWithItsOutput() {
        let text = plain(Self.run(instances: 20, failing: [7]))
        #expect(text.contains("✗ process[f007.txt] 5ms (exit 1)"), "\(text)")
        #expect(text.contains("✗ process 19/20 (1 failed) "), "\(text)")
        #expect(text.contains("✗ process[f007.txt] failed (exit 1): exited with code 1\n  $ wc -l ${{ item }}\n  process[f007.txt] │ 7 lines"),
                "\(text)")
    }

    /// 200 failed instances: the summary details the first few of the
    /// template and names the others in one line.
    @Test func theSummaryOfManyFailedInstancesStaysShort() {
        let text = plain(Self.run(instances: 300, failing: Set(0..<200)))
        let summary = text.components(separatedBy: "- all skipped").last ?? ""
        #expect(summary.components(separatedBy: "\n").count < 25, "\(summary)")
        #expect(summary.contains("✗ process[f000.txt] failed (exit 1)"), "\(summary)")
        #expect(summary.contains("… and 197 more failed instances of process: process[f003.txt], process[f004.txt]"), "\(summary)")
        #expect(summary.hasSuffix("moon: FAILED - 101 succeeded, 200 failed, 2 skipped in 3.0s\n"), "\(summary)")
    }

    @Test func instanceFieldsAndExpandSurviveTheJSONStream() throws {
        let events = [Self.event(0, .expand(node: "process", instances: ["process[a]", "process[b c]"])),
                      Self.event(1, .start(node: "process[a]", queue: "default", attempt: 1, command: "wc"),
                                 RunEvent.Instance(template: "process", item: "a")),
                      Self.event(2, .skip(node: "test[unit,O2]", reason: .canceled),
                                 RunEvent.Instance(template: "test", matrix: [KeyValue("suite", "unit"), KeyValue("opt", "O2")])),
                      Self.event(3, .error(node: "process", durationMilliseconds: 0, error: NodeError(.fanOut, "needs.a.outputs.b is not a list")))]
        let text = Fixture.jsonLines(events)
        #expect(text.contains(#""event":"expand","node":"process","instances":["process[a]","process[b c]"]"#), "\(text)")
        #expect(text.contains(#""node":"process[a]","template":"process","item":"a","queue""#), "\(text)")
        #expect(text.contains(#""template":"test","matrix":{"suite":"unit","opt":"O2"},"reason":"canceled""#), "\(text)")
        #expect(text.contains(#""kind":"fan-out""#), "\(text)")
        let decoded = try EventDecoder.decodeAll(text)
        #expect(decoded.map(\.event.instance) == events.map(\.instance))
        #expect(Fixture.jsonLines(decoded.map(\.event)) == text)
    }
}

/// A `for-each` or `matrix` of the graph file: its instances are in the
/// plan from the start, and no node stands for the template.
@Suite struct StaticFanOutReportTests {
    static func run(failing: Bool = false) -> [RunEvent] {
        let a = RunEvent.Instance(template: "obj", item: "src/a.c"), b = RunEvent.Instance(template: "obj", item: "src/b.c")
        let e = FanOutReportTests.event
        return [
            e(0, .graphStart(graph: "c", nodes: ["obj[src/a.c]", "obj[src/b.c]", "app"], queues: [QueueWidth(name: "default", concurrency: 2)]), nil),
            e(1, .start(node: "obj[src/a.c]", queue: "default", attempt: 1, command: "cc -c src/a.c"), a),
            e(2, .start(node: "obj[src/b.c]", queue: "default", attempt: 1, command: "cc -c src/b.c"), b),
            e(100, .complete(node: "obj[src/a.c]", durationMilliseconds: 99, exitCode: 0, outputs: []), a),
            failing ? e(1201, .error(node: "obj[src/b.c]", durationMilliseconds: 1199, error: NodeError(.exit, "exited with code 1", exitCode: 1)), b)
                : e(1201, .complete(node: "obj[src/b.c]", durationMilliseconds: 1199, exitCode: 0, outputs: []), b),
            failing ? e(1201, .skip(node: "app", reason: .upstreamFailed), nil) : e(1202, .start(node: "app", queue: "default", attempt: 1, command: "cc"), nil),
        ] + (failing ? [e(1201, .graphComplete(ok: false, durationMilliseconds: 1201, counts: Fixture.counts(1, 1, 1, 0), criticalPath: []), nil)]
                     : [e(1300, .complete(node: "app", durationMilliseconds: 98, exitCode: 0, outputs: []), nil),
                        e(1300, .graphComplete(ok: true, durationMilliseconds: 1300, counts: Fixture.counts(3, 0, 0, 0), criticalPath: []), nil)])
    }

    func plain(_ events: [RunEvent], verbosity: Verbosity = .normal) -> String {
        let capture = CapturedSink()
        let reporter = PlainReporter(sink: capture.sink, verbosity: verbosity)
        for event in events { reporter.report(event) }
        reporter.finish()
        return capture.text
    }

    @Test func theLastInstanceToEndPrintsTheTemplatesLine() {
        let text = plain(Self.run())
        #expect(text.contains("✓ obj 2/2 1.2s\n✓ app 98ms\n"), "\(text)")
        #expect(!text.contains("✓ obj["), "\(text)")
    }

    @Test func aFailedInstanceIsPrintedAndCountedInTheTemplatesLine() {
        let text = plain(Self.run(failing: true))
        #expect(text.contains("✗ obj[src/b.c] 1.1s (exit 1)\n✗ obj 1/2 (1 failed) 1.2s\n"), "\(text)")
    }

    @Test func verboseShowsEachInstanceAndTheTemplate() {
        let text = plain(Self.run(), verbosity: .verbose)
        #expect(text.contains("✓ obj[src/a.c] 99ms"), "\(text)")
        #expect(text.contains("✓ obj 2/2 1.2s"), "\(text)")
    }
}
