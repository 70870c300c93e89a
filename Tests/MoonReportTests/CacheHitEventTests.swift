import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// A node restored from the output cache: its `skip` event carries
/// `reason: cache-hit` and what was restored, valid against the events
/// schema, read back by `moon replay`, and counted in the summary.
@Suite struct CacheHitEventTests {
    static let event = RunEvent(time: Date(timeIntervalSince1970: 1_764_000_000), kind: .skip(node: "build", reason: .cacheHit),
                                restored: CacheRestore(files: 3, bytes: 2048))

    @Test func theEventSaysWhatWasRestored() throws {
        let line = EventEncoder.encode(Self.event, seq: 1)
        #expect(line.hasSuffix(#""event":"skip","node":"build","reason":"cache-hit","restored":{"files":3,"bytes":2048}}"#), "\(line)")
        let decoded = try EventDecoder.decode(line)
        #expect(decoded.event.restored == CacheRestore(files: 3, bytes: 2048))
    }

    @Test(.enabled(if: SchemaValidator.available, SchemaValidator.reason))
    func theEventIsValid() {
        let result = SchemaValidator.validate(EventEncoder.encode(Self.event, seq: 1) + "\n")
        #expect(result.ok, "\(result.messages)")
        let bad = #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"a","reason":"cache-hit","restored":{"files":-1,"bytes":0}}"#
        #expect(!SchemaValidator.validate(bad + "\n").ok)
    }

    @Test func theLineAndTheSummaryCountIt() {
        #expect(EventText.skipped(node: "build", reason: .cacheHit, restored: CacheRestore(files: 3, bytes: 2048)).plain
            == "- build restored from the cache (3 files, 2 KiB)")
        var ledger = RunLedger()
        ledger.apply(Self.event)
        var counts = RunCounts()
        counts.skipped = 1
        ledger.apply(RunEvent(time: Self.event.time, kind: .graphComplete(ok: true, durationMilliseconds: 5, counts: counts, criticalPath: [])))
        #expect(RunSummary.result(ledger.end!).plain == "moon: ok - 1 restored from the cache (2 KiB) in 5ms")
    }

    @Test func theLiveViewCountsIt() {
        var ledger = RunLedger()
        ledger.apply(RunEvent(time: Self.event.time, kind: .graphStart(graph: "g", nodes: ["build", "app"], queues: [])))
        ledger.apply(Self.event)
        let area = StatusArea(width: 80, maxLines: 6, stallAfterMilliseconds: 30_000)
        #expect(area.header(ledger, now: Self.event.time).plain == "[1/2] 0.0s · 1 restored (2 KiB)")
    }
}

