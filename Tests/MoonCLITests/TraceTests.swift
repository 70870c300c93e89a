import Foundation
import GRDB
import Testing

/// `moon trace` and `moon run --trace`, through the built binary: the
/// Chrome trace of a real run loads as JSON with every attempt's `X` event
/// on a lane of its queue, the critical path and the needs' arrows; the
/// same from a `--json` recording and from a run of the history; written as
/// the run goes, it loads even when the run is cut short.
@Suite struct TraceTests {
    /// Three nodes on a queue two wide (one waits), one that needs them, and one that fails once.
    static let graph = """
        version: 1
        queues:
          default: { concurrency: 2 }
        nodes:
          a: { run: sleep 0.3 }
          b: { run: sleep 0.5 }
          c: { run: sleep 0.2 }
          d:
            needs: [a, b, c]
            run: echo done
          flaky:
            run: test -f tried || { touch tried; exit 3; }
            retry: { times: 1, delay: 10ms }
        """

    /// The trace's events, parsed by Foundation's JSON reader (as strict as a browser's).
    static func events(_ text: String) throws -> [[String: Any]] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [[String: Any]], "not a JSON array of objects")
    }

    static func spans(_ events: [[String: Any]], category: String = "node") -> [[String: Any]] {
        events.filter { $0["ph"] as? String == "X" && $0["cat"] as? String == category }
    }

    static func args(_ event: [String: Any]) -> [String: Any] { event["args"] as? [String: Any] ?? [:] }

    /// The pid of the process named `name` by an `M` event.
    static func pid(named name: String, in events: [[String: Any]]) -> Int? {
        events.first { $0["ph"] as? String == "M" && $0["name"] as? String == "process_name" && args($0)["name"] as? String == name }?["pid"] as? Int
    }

    /// Every attempt on a lane of its queue, no two at once on a lane, the
    /// retried node's two attempts, the critical path marked (and on its own
    /// process), the waiting node's wait, and an arrow into `d` from each need.
    /// (A recording's `retry` event has the error's text, not its exit code.)
    static func checkRunTrace(_ events: [[String: Any]], streamed: Bool = false, recorded: Bool = false) throws {
        let spans = spans(events)
        #expect(Set(spans.compactMap { $0["name"] as? String }) == ["a", "b", "c", "d", "flaky"], "\(spans)")
        let queue = try #require(pid(named: "queue default", in: events), "no process for the queue")
        for span in spans {
            #expect(span["pid"] as? Int == queue)
            let lane = try #require(span["tid"] as? Int)
            #expect((1...2).contains(lane), "lane \(lane) is beyond the queue's width 2")
            #expect(span["ts"] is Int && span["dur"] is Int)
        }
        let lanes = events.filter { $0["ph"] as? String == "M" && $0["name"] as? String == "thread_name" && $0["pid"] as? Int == queue }
            .compactMap { args($0)["name"] as? String }
        #expect(Set(lanes) == ["slot 1", "slot 2"], "\(lanes)")
        for lane in 1...2 {
            let onLane = spans.filter { $0["tid"] as? Int == lane }.sorted { ($0["ts"] as! Int) < ($1["ts"] as! Int) }
            for (x, y) in zip(onLane, onLane.dropFirst()) {
                #expect((x["ts"] as! Int) + (x["dur"] as! Int) <= (y["ts"] as! Int) + 1_000, "\(x["name"]!) and \(y["name"]!) overlap on slot \(lane)")
            }
        }
        let flaky = spans.filter { $0["name"] as? String == "flaky" }.sorted { (args($0)["attempt"] as! Int) < (args($1)["attempt"] as! Int) }
        #expect(flaky.map { args($0)["attempt"] as? Int } == [1, 2])
        #expect(flaky.map { args($0)["result"] as? String } == ["retried", "succeeded"])
        #expect(flaky.first.flatMap { args($0)["exit_code"] as? Int } == (recorded ? nil : 3))
        #expect(flaky.last.map { args($0)["retry"] as? Bool } == true)
        // One of a, b and c waited for a slot, about as long as the shortest of the two others ran.
        let waits = spans.filter { ["a", "b", "c"].contains($0["name"] as? String) }.compactMap { args($0)["waited_ms"] as? Int }
        #expect(waits.count == 3 && waits.max()! >= 100, "\(waits)")
        // The critical path: b (the longest need), then d.
        let run = try #require(Self.spans(events, category: "run").first, "no run span")
        let path = try #require(args(run)["critical_path"] as? [String])
        #expect(path.suffix(2) == ["b", "d"], "\(path)")
        let critical = try #require(pid(named: "critical path", in: events))
        #expect(Self.spans(events, category: "critical").filter { $0["pid"] as? Int == critical }.compactMap { $0["name"] as? String } == path)
        if !streamed {
            for span in spans {
                #expect(args(span)["critical"] as? Bool == path.contains(span["name"] as! String), "\(span)")
            }
        }
        // The arrows into d: one per need, each end bound to a span that starts where it stands.
        let d = try #require(spans.first { $0["name"] as? String == "d" })
        let finishes = events.filter { $0["ph"] as? String == "f" && $0["ts"] as? Int == d["ts"] as? Int && $0["tid"] as? Int == d["tid"] as? Int }
        #expect(finishes.count == 3 && finishes.allSatisfy { $0["bp"] as? String == "e" }, "\(finishes)")
        let ids = Set(finishes.compactMap { $0["id"] as? Int })
        let starts = events.filter { $0["ph"] as? String == "s" && ids.contains($0["id"] as? Int ?? -1) }
        #expect(starts.count == 3)
        for start in starts {
            let bound = spans.first { $0["ts"] as? Int == start["ts"] as? Int && $0["tid"] as? Int == start["tid"] as? Int }
            #expect(["a", "b", "c"].contains(bound?["name"] as? String ?? ""), "\(start)")
        }
    }

    @Test func theChromeTraceOfTheLastRunHasEveryAttemptOnALaneOfItsQueue() throws {
        let moon = try Moon(graph: Self.graph)
        let run = try moon.run(["run", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let trace = try moon.run(["trace"])
        #expect(trace.status == 0, "\(trace.stderr)")
        try Self.checkRunTrace(try Self.events(trace.stdout))
        // -o writes the same to a file; an .html name picks the page.
        #expect(try moon.run(["trace", "-o", "trace.json"]).status == 0)
        try Self.checkRunTrace(try Self.events(moon.read("trace.json") ?? ""))
        #expect(try moon.run(["trace", "-o", "trace.html"]).status == 0)
        #expect(moon.read("trace.html")?.hasPrefix("<!DOCTYPE html>") == true)
    }

    @Test func aRecordingOfRunJSONIsTracedAsTheRunWas() throws {
        let moon = try Moon(graph: Self.graph)
        let run = try moon.run(["run", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        try moon.write("events.jsonl", run.stdout)
        // The start events say how long each node waited.
        #expect(run.events("start").filter { $0.waitedMilliseconds != nil }.count == 5, "\(run.stdout)")
        // As the events' schema says.
        let check = try shell("python3 \(Moon.root.path)/schema/validate-events.py events.jsonl --complete", in: moon)
        #expect(check.status == 0 || check.status == 3, "\(check.stdout)\(check.stderr)")
        let trace = try moon.run(["trace", "--from", "events.jsonl"])
        #expect(trace.status == 0, "\(trace.stderr)")
        try Self.checkRunTrace(try Self.events(trace.stdout), recorded: true)
        // Not a recording: a clear error.
        try moon.write("bad.jsonl", "{\"v\":1}\n")
        let bad = try moon.run(["trace", "--from", "bad.jsonl"])
        #expect(bad.status == 2 && bad.stderr.contains("bad.jsonl:1"), "\(bad.stderr)")
        let mistaken = try moon.run(["trace", "events.jsonl"])
        #expect(mistaken.status == 2 && mistaken.stderr.contains("draw it with --from events.jsonl"), "\(mistaken.stderr)")
        let both = try moon.run(["trace", "--from", "events.jsonl", "--run", "1"])
        #expect(both.status == 2 && both.stderr.contains("give one of them"), "\(both.stderr)")
    }

    /// `--run N` draws run #N of `moon history`; a no-op records no run and no trace.
    @Test func runNumberDrawsThatRunOfTheHistory() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              first: { run: echo one }
              second: { run: echo two }
              kept:
                sources: [in.txt]
                generates: [out.txt]
                run: cp in.txt out.txt
            """)
        try moon.write("in.txt", "x")
        let none = try moon.run(["trace"])
        #expect(none.status == 1 && none.stderr.contains("no run of"), "\(none.stderr)")
        #expect(try moon.run(["run", "first", "-q"]).status == 0)
        #expect(try moon.run(["run", "second", "kept", "-q"]).status == 0)
        // Nothing to do: no history, no trace.
        let noop = try moon.run(["run", "kept"])
        #expect(noop.status == 0 && noop.stdout.contains("up to date"), "\(noop.stdout)")
        func names(_ arguments: [String]) throws -> Set<String> {
            let result = try moon.run(["trace"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            return Set(Self.spans(try Self.events(result.stdout)).compactMap { $0["name"] as? String })
        }
        #expect(try names(["--run", "1"]) == ["first"])
        #expect(try names(["--run", "2"]) == ["second", "kept"])
        #expect(try names([]) == ["second", "kept"])
        let missing = try moon.run(["trace", "--run", "9"])
        #expect(missing.status == 1 && missing.stderr.contains("no run #9"), "\(missing.stderr)")
        let rows = try DatabaseQueue(path: moon.path(".moon/state.db")).read { db in
            [try Int.fetchOne(db, sql: "SELECT count(*) FROM runs"), try Int.fetchOne(db, sql: "SELECT count(*) FROM run_traces")]
        }
        #expect(rows == [2, 2])
    }

    /// `moon run --trace PATH`: the trace as the run goes. Cut off by a
    /// kill, it loads once `]` is added (the format allows it missing);
    /// stopped by Ctrl-C, it is whole, its running attempt canceled.
    @Test func runTraceWritesTheTraceAsTheRunGoes() throws {
        let moon = try Moon(graph: Self.graph)
        let run = try moon.run(["run", "-q", "--trace", "run.json"])
        #expect(run.status == 0, "\(run.stderr)")
        try Self.checkRunTrace(try Self.events(moon.read("run.json") ?? ""), streamed: true)

        try moon.write("slow.yaml", """
            version: 1
            nodes:
              quick: { run: "true" }
              slow: { run: sleep 20 }
            """)
        for signal in [SIGKILL, SIGINT] {
            let file = "cut-\(signal).json"
            let running = try moon.start(["run", "slow.yaml", "-q", "--trace", file])
            #expect(eventually(30) { moon.read(file)?.contains("\"quick\"") == true }, "the quick node's span was not written")
            let partial = moon.read(file) ?? ""
            #expect(!partial.hasSuffix("]\n"))
            #expect(Self.spans(try Self.events(partial + "]")).compactMap { $0["name"] as? String } == ["quick"])
            running.signal(signal)
            _ = try running.wait()
            let text = moon.read(file) ?? ""
            if signal == SIGKILL {
                #expect(Self.spans(try Self.events(text + "]")).compactMap { $0["name"] as? String } == ["quick"])
            } else {
                let events = try Self.events(text)
                let slow = Self.spans(events).first { $0["name"] as? String == "slow" }
                #expect(slow.map { Self.args($0)["result"] as? String } == "canceled", "\(text)")
                let runSpan = Self.spans(events, category: "run").first
                #expect(runSpan.map { Self.args($0)["interrupted"] as? String } == "SIGINT", "\(text)")
            }
        }
    }

    /// A node the output cache restored ran nowhere: an instant event with what was restored.
    @Test func aRestoreFromTheCacheIsAnInstantEvent() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                sources: [in.txt]
                generates: [out.txt]
                run: cp in.txt out.txt
              after:
                needs: [gen]
                run: "true"
            """)
        for text in ["a", "b", "a"] {
            try moon.write("in.txt", text)
            #expect(try moon.run(["run", "-q"]).status == 0)
        }
        let events = try Self.events(try moon.run(["trace"]).stdout)
        let restores = events.filter { $0["ph"] as? String == "i" && $0["cat"] as? String == "cache" }
        #expect(restores.compactMap { $0["name"] as? String } == ["gen"], "\(events)")
        #expect(restores.first.map { Self.args($0)["cache"] as? String } == "restored from cache")
        #expect(restores.first.flatMap { Self.args($0)["files"] as? Int } == 1)
        #expect(restores.first?["pid"] as? Int == Self.pid(named: "restored from cache", in: events))
        #expect(Self.spans(events).compactMap { $0["name"] as? String } == ["after"])
        // The page lists it with the nodes that ran.
        guard chromium != nil else { return }
        #expect(try moon.run(["trace", "-o", "trace.html"]).status == 0)
        let dom = try TraceHTMLTests.browse(moon, ["--dump-dom"], page: "trace.html")
        #expect(dom.stdout.contains("<td class=\"name\">gen</td>") && dom.stdout.contains("<td>restored from cache</td>"), "\(dom.stdout.suffix(2000))")
    }

    @Test func runTraceRefusesAPathItCannotWriteBeforeAnythingRuns() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: touch ran }\n")
        let result = try moon.run(["run", "--trace", "no/such/dir/t.json"])
        #expect(result.status == 1 && result.stderr.contains("cannot write the trace no/such/dir/t.json"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("ran")))
        let dry = try moon.run(["run", "-n", "--trace", "t.json"])
        #expect(dry.status == 2 && dry.stderr.contains("nothing to --trace"), "\(dry.stderr)")
    }

    /// A slip of the path costs no file: the graph file, moon's state and a
    /// file moon did not write are refused, before anything runs; a FIFO
    /// nobody reads is an error, not a wait. A trace moon wrote is replaced.
    @Test func aTracePathNeverReplacesTheGraphTheStateOrAnotherFile() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: touch ran }\n")
        let graph = moon.read("moon.yaml")
        try moon.write("main.c", "int main(void) { return 0; }\n")
        #expect(try moon.run(["run", "--trace", "t.json"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("ran"))
        for path in ["moon.yaml", "./moon.yaml", ".moon/state.db", "main.c"] {
            let result = try moon.run(["run", "--trace", path])
            #expect(result.status == 1, "\(path): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: moon.path("ran")), "\(path): nothing runs")
            let written = try moon.run(["trace", "-o", path])
            #expect(written.status != 0, "\(path): \(written.stderr)")
        }
        #expect(moon.read("moon.yaml") == graph)
        #expect(moon.read("main.c") == "int main(void) { return 0; }\n")
        #expect(try moon.run(["history"]).status == 0, "the state is whole")
        #expect(try moon.run(["run", "--force", "--trace", "t.json"]).status == 0, "a trace moon wrote is replaced")
        #expect(try moon.run(["trace", "-o", "t.json"]).status == 0)
        #expect(mkfifo(moon.path("fifo"), 0o600) == 0)
        let started = Date()
        let fifo = try moon.run(["run", "--force", "--trace", "fifo"], limit: 20)
        #expect(fifo.status == 1 && fifo.stderr.contains("nobody reads"), "\(fifo.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
    }
}

/// Headless Chromium, which draws the HTML trace as a browser would.
let chromium: String? = ["chromium", "chromium-browser"].lazy.compactMap { name in
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}.first

/// The HTML trace in a real browser: the page renders its nodes into the
/// DOM and its timeline onto the canvas (a screenshot that is not blank),
/// a hostile node name or command stays text, and 10,000 nodes render in time.
@Suite(.enabled(if: chromium != nil, "needs chromium on PATH (make test-deps installs it)"), .serialized)
struct TraceHTMLTests {
    /// Runs headless Chromium with `arguments` on the page; its stdout.
    static func browse(_ moon: Moon, _ arguments: [String], page: String, limit: TimeInterval = 120) throws -> Moon.Result {
        let quoted = ([chromium!, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                       "--user-data-dir=\(moon.path(".chromium"))"] + arguments
                      + [page.hasPrefix("file://") ? page : moon.path(page)])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try shell(quoted + " 2>/dev/null", in: moon, limit: limit)
    }

    /// How many distinct colours the PNG's pixels have (python3's zlib reads the rows).
    static func colours(of png: String, in moon: Moon) throws -> Int {
        let script = #"""
        import struct, sys, zlib
        data = open(sys.argv[1], 'rb').read()
        assert data[:8] == b'\x89PNG\r\n\x1a\n'
        pos, idat, head = 8, b'', None
        while pos < len(data):
            n, kind = struct.unpack('>I4s', data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
            if kind == b'IHDR': head = struct.unpack('>IIBBBBB', body)
            elif kind == b'IDAT': idat += body
        w, h, depth, ctype = head[:4]
        bpp = {2: 3, 6: 4}[ctype]
        raw = zlib.decompress(idat); stride = w * bpp; prev = bytearray(stride); seen = set(); i = 0
        for y in range(h):
            f = raw[i]; row = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
            for x in range(stride):
                a = row[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
                if f == 1: row[x] = (row[x] + a) & 255
                elif f == 2: row[x] = (row[x] + b) & 255
                elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            prev = row
            if y % 4 == 0: seen.update(bytes(row[j:j + 3]) for j in range(0, stride, bpp * 2))
        print(len(seen))
        """#
        try moon.write("colours.py", script)
        let result = try shell("python3 colours.py '\(png)'", in: moon)
        #expect(result.status == 0, "\(result.stderr)")
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test func thePageShowsEveryNodeAndItsTimeline() throws {
        let moon = try Moon(graph: TraceTests.graph)
        #expect(try moon.run(["run", "-q"]).status == 0)
        let trace = try moon.run(["trace", "-o", "trace.html"])
        #expect(trace.status == 0, "\(trace.stderr)")
        let page = moon.read("trace.html") ?? ""
        #expect(!page.contains("http://") && !page.contains("https://") && !page.contains("src="), "the page loads nothing")
        let dom = try Self.browse(moon, ["--dump-dom"], page: "trace.html")
        #expect(dom.stdout.contains("data-rendered=\"6\""), "the script did not run to its end")
        for node in ["a", "b", "c", "d", "flaky"] {
            #expect(dom.stdout.contains("<td class=\"name\">\(node)</td>"), "no row for \(node)")
        }
        // A link to a node opens with its details, as a click on its span shows them.
        let linked = try Self.browse(moon, ["--dump-dom"], page: URL(fileURLWithPath: moon.path("trace.html")).absoluteString + "#node=flaky")
        #expect(linked.stdout.contains("<span class=\"k\">attempt: </span>2"), "\(linked.stdout.suffix(3000))")
        #expect(linked.stdout.contains("<span class=\"k\">command: </span>test -f tried"))
        #expect(linked.stdout.contains("<tr class=\"node selected\""))
        let shot = try Self.browse(moon, ["--screenshot=\(moon.path("shot.png"))", "--window-size=1200,800", "--hide-scrollbars"], page: "trace.html")
        #expect(FileManager.default.fileExists(atPath: moon.path("shot.png")), "\(shot.stderr)")
        #expect(try Self.colours(of: moon.path("shot.png"), in: moon) > 8, "the screenshot is blank")
    }

    /// Names and commands come from a cloned repository: one that closes the
    /// script element and opens markup stays text in the page.
    @Test func aHostileNameOrCommandStaysText() throws {
        let hostile = "</script><img src=x onerror=alert(1)>"
        let moon = try Moon(graph: """
            version: 1
            nodes:
              evil:
                for-each: ['\(hostile)']
                run: "echo '\(hostile)' >/dev/null # ${{ item }}"
            """)
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(try moon.run(["trace", "-o", "trace.html"]).status == 0)
        let page = moon.read("trace.html") ?? ""
        #expect(!page.contains("<img"), "the markup reached the page raw")
        #expect(page.components(separatedBy: "</script>").count == 3, "a name closed a script element")
        let dom = try Self.browse(moon, ["--dump-dom"], page: "trace.html")
        #expect(dom.stdout.contains("data-rendered=\"1\""), "the page did not render")
        #expect(!dom.stdout.contains("<img"), "an <img> element was injected")
        #expect(dom.stdout.contains("evil[&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;]"), "the name is not shown as text")
    }

    /// 10,000 nodes (a recording, drawn with --from): the page renders them
    /// on its canvas, lists the slowest in its table, in a generous time.
    @Test func tenThousandNodesRenderInTime() throws {
        let moon = try Moon()
        let count = 10_000
        var lines: [String] = []
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func ts(_ ms: Int) -> String {
            formatter.string(from: start.addingTimeInterval(Double(ms) / 1000))
        }
        var timed: [(ms: Int, order: Int, body: String)] = []
        let plan = (0..<count).map { "\"n\($0)\"" }.joined(separator: ",")
        timed.append((0, 0, "\"event\":\"graph-start\",\"graph\":\"big\",\"nodes\":\(count),\"plan\":[\(plan)],\"queues\":{\"default\":8}"))
        for i in 0..<count {
            let begin = (i / 8) * 10 + i % 3
            timed.append((begin, 2, "\"event\":\"start\",\"node\":\"n\(i)\",\"queue\":\"default\",\"attempt\":1,\"command\":\"cc -c n\(i).c\",\"waited_ms\":\(i % 5)"))
            timed.append((begin + 5 + i % 4, 1, "\"event\":\"complete\",\"node\":\"n\(i)\",\"duration_ms\":\(5 + i % 4),\"exit_code\":0,\"outputs\":{}"))
        }
        let end = (count / 8) * 10 + 20
        timed.append((end, 3, "\"event\":\"graph-complete\",\"ok\":true,\"duration_ms\":\(end),"
                      + "\"counts\":{\"succeeded\":\(count),\"failed\":0,\"skipped\":0,\"canceled\":0},\"critical_path\":[\"n\(count - 1)\"]"))
        // A recording is in time order (an end before a start at the same time).
        for (seq, event) in timed.sorted(by: { ($0.ms, $0.order) < ($1.ms, $1.order) }).enumerated() {
            lines.append("{\"v\":1,\"seq\":\(seq + 1),\"ts\":\"\(ts(event.ms))\",\(event.body)}")
        }
        try moon.write("big.jsonl", lines.joined(separator: "\n") + "\n")
        let trace = try moon.run(["trace", "--from", "big.jsonl", "-o", "big.html"])
        #expect(trace.status == 0, "\(trace.stderr)")
        let began = Date()
        let dom = try Self.browse(moon, ["--dump-dom"], page: "big.html", limit: 180)
        let seconds = Date().timeIntervalSince(began)
        #expect(dom.stdout.contains("data-rendered=\"\(count)\""), "the page did not render 10,000 attempts")
        #expect(dom.stdout.contains("the slowest 500 of \(count) nodes"))
        #expect(dom.stdout.components(separatedBy: "<tr class=\"node").count - 1 == 500)
        #expect(seconds < 90, "rendering took \(seconds)s")
    }
}
