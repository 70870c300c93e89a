import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// A fan-out's line, one wording for every way its instances can end, and
/// the short names the live view gives running instances.
@Suite struct FanOutWordingTests {
    func group(total: Int, succeeded: Int = 0, upToDate: Int = 0, restored: Int = 0, failed: Int = 0, skipped: Int = 0,
               canceled: Int = 0) -> RunLedger.Group {
        var g = RunLedger.Group()
        g.total = total
        g.succeeded = succeeded
        g.upToDate = upToDate
        g.restored = restored
        g.failed = failed
        g.skipped = skipped
        g.canceled = canceled
        return g
    }

    @Test func eachWayReadsTheSame() {
        let cases: [(RunLedger.Group, Int?, String)] = [
            (group(total: 24, succeeded: 24), 2100, "✓ test 24/24 2.1s"),
            (group(total: 24, upToDate: 24), 0, "✓ test 24/24 up to date"),
            (group(total: 24, restored: 24), 0, "✓ test 24/24 restored from the cache"),
            (group(total: 24, succeeded: 3, upToDate: 20, restored: 1), 1200, "✓ test 24/24 (20 up to date, 1 restored) 1.2s"),
            (group(total: 6, succeeded: 3, failed: 1, skipped: 2), 110, "✗ test 3/6 (1 failed, 2 skipped) 110ms"),
            (group(total: 100, skipped: 100), nil, "- test 0/100 skipped"),
            (group(total: 1000, succeeded: 494, skipped: 504, canceled: 2), 11900, "- test 494/1000 (504 skipped, 2 canceled) 11.9s"),
            (group(total: 2, failed: 2), 5, "✗ test 0/2 failed 5ms"),
        ]
        for (g, ms, expected) in cases {
            #expect(EventText.fanOut(template: "test", group: g, milliseconds: ms).plain == expected)
        }
    }

    @Test func aRunningInstanceIsNamedByItsItemsFileNameWithoutExtension() {
        #expect(StatusArea.shortName("test[tests/test_make.py]", template: "test") == "test_make")
        #expect(StatusArea.shortName("text[man/man1/c++filt.1.gz]", template: "text") == "c++filt.1")
        #expect(StatusArea.shortName("agg[man7]", template: "agg") == "man7")
        // A dot before digits is no extension: a matrix label or a version stays whole.
        #expect(StatusArea.shortName("t[linux,3.12]", template: "t") == "linux,3.12")
        #expect(StatusArea.shortName("t[v1.2]", template: "t") == "v1.2")
        #expect(StatusArea.shortName("t[.hidden]", template: "t") == ".hidden")
        #expect(StatusArea.shortName("t[dir/]", template: "t") == "dir/")
    }

    @Test func theTimeLeftComesOnceThePaceIsKnown() {
        var row = StatusArea.Row(node: RunLedger.Running(node: "test 2/8", queue: "default", attempt: 1, started: Date(), lastOutput: Date()))
        row.done = 2
        row.total = 8
        #expect(StatusArea.remaining(row, elapsed: 4000) == "~12.0s left")
        #expect(StatusArea.remaining(row, elapsed: 1000) == nil)
        row.done = 0
        #expect(StatusArea.remaining(row, elapsed: 4000) == nil)
    }
}
