import Foundation
import Testing
@testable import MoonReport
import MoonEvents

@Suite struct EventDecoderTests {
    @Test func roundTripIsIdentical() throws {
        let text = Fixture.jsonLines(Fixture.everyKind)
        let decoded = try EventDecoder.decodeAll(text)
        #expect(decoded.count == Fixture.everyKind.count)
        #expect(decoded.map(\.seq) == Array(1...Fixture.everyKind.count))
        let again = decoded.map { EventEncoder.encode($0.event, seq: $0.seq) + "\n" }.joined()
        #expect(again == text)
    }

    /// `moon replay` reads a node's usage back, on `complete` and `error` alike.
    @Test func usageSurvivesDecoding() throws {
        let measured = Fixture.everyKind.filter { $0.usage != nil }
        #expect(measured.map(\.name) == ["complete", "error"])
        for event in measured {
            let line = EventEncoder.encode(event, seq: 1)
            #expect(line.hasSuffix(#","usage":{"cpu_user_ms":\#(event.usage!.cpuUserMilliseconds),"cpu_sys_ms":\#(event.usage!.cpuSystemMilliseconds),"max_rss_bytes":\#(event.usage!.maxRSSBytes),"source":"rusage"}}"#), "\(line)")
            #expect(try EventDecoder.decode(line).event.usage == event.usage)
        }
    }

    /// A node measured in a memory cgroup of its own says so, and replay keeps it.
    @Test func aCgroupSourceSurvivesDecoding() throws {
        var event = try #require(Fixture.everyKind.first { $0.usage != nil })
        event.usage?.source = .cgroup
        let line = EventEncoder.encode(event, seq: 1)
        #expect(line.contains(#""source":"cgroup"}"#), "\(line)")
        #expect(try EventDecoder.decode(line).event.usage == event.usage)
    }

    @Test func keyOrderOfQueuesAndOutputsSurvives() throws {
        let line = #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.999Z","event":"graph-start","graph":"g","nodes":0,"plan":[],"queues":{"z":1,"a\"b":2,"m":3}}"#
        let event = try EventDecoder.decode(line).event
        guard case .graphStart(_, _, let queues) = event.kind else { Issue.record("not graph-start"); return }
        #expect(queues.map(\.name) == ["z", "a\"b", "m"])
        #expect(EventEncoder.encode(event, seq: 1) == line)
    }

    @Test func timesKeepTheirMilliseconds() throws {
        for ms in [0, 1, 7, 229, 500, 999] {
            let ts = "2026-11-22T10:04:05.\(String(format: "%03d", ms))Z"
            let line = #"{"v":1,"seq":1,"ts":"\#(ts)","event":"skip","node":"a","reason":"condition"}"#
            #expect(EventEncoder.encode(try EventDecoder.decode(line).event, seq: 1) == line)
        }
        #expect(DateText.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(DateText.rfc3339(Date(timeIntervalSince1970: 1_795_860_245.0071)) == "2026-11-28T10:04:05.007Z")
        #expect(DateText.parseRFC3339("2026-11-22T12:04:05+02:00") == DateText.parseRFC3339("2026-11-22T10:04:05Z"))
        #expect(DateText.parseRFC3339("2026-11-22T10:04:05") == nil)
        #expect(DateText.parseRFC3339("yesterday") == nil)
        // A date no clock gives (read from a history a checkout brought) prints, clamped, and does not trap.
        #expect(DateText.rfc3339(Date(timeIntervalSince1970: 1e300)).hasPrefix("9999-12-31T23:59:59"))
        #expect(!DateText.human(Date(timeIntervalSince1970: -1e300)).isEmpty)
    }

    @Test func startCarriesTheCommand() throws {
        let event = try EventDecoder.decode(EventEncoder.encode(Fixture.failingRun[1], seq: 2)).event
        guard case .start(_, _, _, let command, _) = event.kind else { Issue.record("not start"); return }
        #expect(command == "curl -fsS https://example.org/data.json -o data.json")
    }

    @Test(arguments: [
        ("{\"v\":1", "not valid JSON at column 7: expected ',' or '}', found the end of the text"),
        ("[1,2]", "expected a JSON object"),
        (#"{"seq":1}"#, "missing field 'v'"),
        (#"{"v":2,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"skip"}"#, "unsupported schema version 2 (this moon reads v 1)"),
        (#"{"v":1,"seq":"one","ts":"2026-11-22T10:04:05.000Z","event":"skip"}"#, "field 'seq' must be an integer"),
        (#"{"v":1,"seq":1,"ts":"now","event":"skip"}"#, "'ts' is not an RFC 3339 time: now"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"party"}"#, "unknown event 'party'"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"skip","node":"a"}"#, "missing field 'reason'"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"graph-complete","ok":1,"duration_ms":1,"counts":{"succeeded":0,"failed":0,"skipped":0,"canceled":0},"critical_path":[]}"#, "field 'ok' must be true or false"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"exit"}}"#, "missing field 'error.message'"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"exit","message":"m","exit_code":2147483648}}"#, "field 'error.exit_code' out of range"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"signal","message":"m","signal":-1}}"#, "field 'error.signal' out of range"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"complete","node":"a","duration_ms":1,"exit_code":1e300}"#, "field 'exit_code' out of range"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"complete","node":"a","duration_ms":-1}"#, "field 'duration_ms' out of range"),
        (#"{"v":1,"seq":-5,"ts":"2026-11-22T10:04:05.000Z","event":"complete","node":"a","duration_ms":1}"#, "field 'seq' out of range"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"complete","node":"a","duration_ms":1,"usage":{"cpu_user_ms":1,"cpu_sys_ms":1,"source":"rusage"}}"#, "missing field 'usage.max_rss_bytes'"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"exit","message":"m"},"usage":{"cpu_user_ms":-1,"cpu_sys_ms":1,"max_rss_bytes":1,"source":"rusage"}}"#, "field 'usage.cpu_user_ms' out of range"),
        (#"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.000Z","event":"complete","node":"a","duration_ms":1,"usage":{"cpu_user_ms":1,"cpu_sys_ms":1,"max_rss_bytes":1,"source":"psychic"}}"#, "unknown usage source 'psychic'"),
    ])
    func badLinesNameTheProblem(line: String, message: String) {
        #expect(throws: EventDecoder.DecodingError(line: 3, message: message)) {
            try EventDecoder.decodeAll("\n" + EventEncoder.encode(Fixture.passingRun[0], seq: 1) + "\n" + line + "\n")
        }
    }

    @Test func blankLinesAndCRLFAreFine() throws {
        let text = Fixture.jsonLines(Fixture.passingRun).replacingOccurrences(of: "\n", with: "\r\n") + "\n\n"
        #expect(try EventDecoder.decodeAll(text).count == Fixture.passingRun.count)
    }
}
