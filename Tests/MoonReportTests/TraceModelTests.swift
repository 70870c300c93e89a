import Foundation
import MoonEvents
import MoonJSON
import Testing
@testable import MoonReport

/// The trace's model from events: lanes, retries, the critical path, the
/// needs' arrows, the history's text and the page's data.
struct TraceModelTests {
    static func start(_ ms: Int, _ node: String, queue: String = "default", attempt: Int = 1, waited: Int? = nil,
                      template: String? = nil) -> RunEvent {
        var event = Fixture.at(ms, .start(node: node, queue: queue, attempt: attempt, command: "run \(node)"))
        event.waitedMilliseconds = waited
        if let template { event.instance = RunEvent.Instance(template: template, item: node) }
        return event
    }

    static func done(_ ms: Int, _ node: String) -> RunEvent {
        Fixture.at(ms, .complete(node: node, durationMilliseconds: 0, exitCode: 0, outputs: []))
    }

    static func graphStart(_ queues: [QueueWidth] = [QueueWidth(name: "default", concurrency: 2)]) -> RunEvent {
        Fixture.at(0, .graphStart(graph: "g", nodes: [], queues: queues))
    }

    static func graphComplete(_ ms: Int, path: [String]) -> RunEvent {
        Fixture.at(ms, .graphComplete(ok: true, durationMilliseconds: ms, counts: RunCounts(), criticalPath: path))
    }

    /// Each attempt takes the lowest lane free when it starts; lanes stay within the queue's width.
    @Test func eachAttemptTakesTheLowestFreeLane() throws {
        let model = try #require(TraceBuilder.model(of: [
            Self.graphStart([QueueWidth(name: "default", concurrency: 2), QueueWidth(name: "net", concurrency: 1)]),
            Self.start(1, "a"), Self.start(2, "b"), Self.start(3, "f", queue: "net"),
            Self.done(10, "a"), Self.start(11, "c", waited: 9),
            Self.done(20, "b"), Self.done(21, "f"), Self.start(22, "d"), Self.start(23, "g", queue: "net"),
            Self.done(30, "c"), Self.done(31, "d"), Self.done(32, "g"), Self.graphComplete(40, path: ["a", "c"]),
        ]))
        let lanes = Dictionary(uniqueKeysWithValues: model.attempts.map { ($0.node, "\(model.queues[$0.queue].name)/\($0.slot)") })
        #expect(lanes == ["a": "default/0", "b": "default/1", "c": "default/0", "d": "default/1", "f": "net/0", "g": "net/0"])
        #expect(model.queues.map(\.lanes) == [2, 1])
        #expect(model.attempts.first { $0.node == "c" }?.waitedMilliseconds == 9)
        #expect(model.attempts.first { $0.node == "c" }.map { [$0.start, $0.duration] } == [11_000, 19_000])
        #expect(model.durationMicroseconds == 40_000)
    }

    /// A retried node's attempts are two spans; only the critical path's nodes are marked.
    @Test func retriesAreSpansAndTheCriticalPathIsMarked() throws {
        let model = try #require(TraceBuilder.model(of: [
            Self.graphStart(), Self.start(0, "flaky"), Self.start(0, "other"),
            Fixture.at(5, .retry(node: "flaky", attempt: 1, delayMilliseconds: 10, error: NodeError(.exit, "exited with code 3", exitCode: 3))),
            Self.start(15, "flaky", attempt: 2), Self.done(20, "other"), Self.done(25, "flaky"),
            Self.start(25, "last"), Self.done(30, "last"), Self.graphComplete(30, path: ["flaky", "last"]),
        ]))
        let flaky = model.attempts.filter { $0.node == "flaky" }
        #expect(flaky.map(\.outcome) == [.retried, .succeeded])
        #expect(flaky.map(\.exitCode) == [3, 0])
        #expect(flaky.map(\.attempt) == [1, 2])
        #expect(model.attempts.filter(\.critical).map(\.node) == ["flaky", "flaky", "last"])
        #expect(model.ok == true)
    }

    /// A need on a fan-out points from each instance; a run cut off keeps its running attempt, to the last event.
    @Test func arrowsForNeedsIncludingAFanOutsInstances() throws {
        var builder = TraceBuilder(needs: ["link": ["obj", "gen"], "obj": ["gen"]])
        for event in [Self.graphStart(), Self.start(0, "gen"), Self.done(5, "gen"),
                      Self.start(6, "obj[a.c]", template: "obj"), Self.start(6, "obj[b.c]", template: "obj"),
                      Self.done(9, "obj[a.c]"), Self.done(10, "obj[b.c]"), Self.start(11, "link")] {
            _ = builder.add(event)
        }
        let model = try #require(builder.finished(at: Fixture.t0.addingTimeInterval(0.02)))
        let names = model.flows().map { "\(model.attempts[$0.from].node)>\(model.attempts[$0.to].node)" }
        #expect(names == ["gen>obj[a.c]", "gen>obj[b.c]", "obj[a.c]>link", "obj[b.c]>link", "gen>link"])
        #expect(model.ok == nil)
        #expect(model.attempts.last?.outcome == .running)
        #expect(model.attempts.last?.duration == 9_000)
    }

    /// The history's text reads back to the same model; damaged text is an error.
    @Test func theHistorysTextReadsBack() throws {
        var model = try #require(TraceBuilder.model(of: Fixture.failingRun))
        model.needs = ["deploy": ["build", "test"]]
        model.attempts[0].usage = NodeUsage(cpuUserMilliseconds: 12, cpuSystemMilliseconds: 3, maxRSSBytes: 1 << 30)
        let text = TraceRecordText.encode(model)
        var back = try TraceRecordText.decode(text)
        #expect(back.startedAt.timeIntervalSince(model.startedAt).magnitude < 0.000_01)
        back.startedAt = model.startedAt
        model.needs = model.needs.filter { name, _ in model.attempts.contains { $0.node == name } }
        #expect(back == model)
        for damaged in ["", "{}", "{\"v\":1}", String(text.dropLast(3)), text.replacingOccurrences(of: "\"succeeded\"", with: "\"won\"")] {
            #expect(throws: TraceRecordText.DecodingError.self) { try TraceRecordText.decode(damaged) }
        }
    }

    /// Hostile names and commands cannot end the page's data script: no
    /// `<`, `>` or `&` in it, and it reads back to the same strings.
    @Test func thePagesDataCannotCloseItsScript() throws {
        let hostile = "</script><img src=x onerror=alert(1)><!-- & \u{2028}"
        var model = TraceModel(graph: hostile, startedAt: Fixture.t0)
        model.queues = [TraceQueue(name: hostile, width: 1, lanes: 1)]
        model.attempts = [TraceAttempt(node: hostile, queue: 0, slot: 0, attempt: 1, start: 0, duration: 5, command: hostile,
                                       outcome: .failed, error: hostile)]
        let data = TraceHTML.data(model)
        #expect(!data.contains("<") && !data.contains(">") && !data.contains("&") && !data.contains("\u{2028}"))
        let parsed = try JSONParser.parse(data)
        #expect(parsed["graph"]?.string == hostile)
        let page = TraceHTML.document(model)
        #expect(page.components(separatedBy: "</script>").count == 3)
        #expect(!page.contains("<img"))
    }

    /// `run --trace`'s file is a JSON array missing only its `]` after
    /// every event, and whole after the last.
    @Test func theStreamedFileLoadsAfterEveryEvent() throws {
        let captured = CapturedSink()
        let reporter = TraceFileReporter(sink: captured.sink, needs: ["deploy": ["build", "test"], "test": ["build"]])
        for event in Fixture.failingRun {
            reporter.report(event)
            let text = captured.text
            guard !text.isEmpty else { continue }
            let whole = text.hasSuffix("]\n")
            let value = try JSONParser.parse(whole ? text : text + "]")
            guard case .array = value else { Issue.record("not an array: \(text)"); return }
        }
        #expect(captured.text.hasSuffix("\n]\n"))
        let chrome = TraceChrome.document(try #require(TraceBuilder.model(of: Fixture.failingRun)))
        guard case .array(let events) = try JSONParser.parse(chrome) else { Issue.record("not an array"); return }
        #expect(events.filter { $0["ph"]?.string == "X" && $0["cat"]?.string == "node" }.count == 5)
    }
}
