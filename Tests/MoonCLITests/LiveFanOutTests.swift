import Foundation
import Testing

/// The live view's row for a fan-out, in a real terminal: it names the
/// running instances by a short part of their items, and its time is the
/// fan-out's since its first instance started, not its newest instance's.
@Suite(.serialized, .enabled(if: TmuxSession.available, "tmux is not installed (make test-deps, or apt-get install tmux)"))
struct LiveFanOutTests {
    @Test func theFanOutRowNamesItsRunningInstancesAndShowsItsOwnTime() throws {
        // Two run at a time. The first to start takes 1.5 s, the others
        // wait for `release`: the row is read while two of them run, one
        // started 1.5 s after the fan-out did.
        let moon = try Moon(graph: """
            version: 1
            name: live
            queues: { default: { concurrency: 2 } }
            nodes:
              test:
                for-each: [tests/test_abc.py, tests/test_funcs.py, tests/test_make.py, tests/test_slots.py]
                run: |
                  if mkdir first 2>/dev/null; then sleep 1.5; exit 0; fi
                  while [ ! -e release ]; do sleep 0.05; done
            """)
        let session = TmuxSession(in: moon)
        session.start("run", width: 100)
        let pattern = #"test 1/4 .* · test_[a-z]+, test_[a-z]+$"#
        let running = try #require(session.waitFor { screen in
            screen.split(separator: "\n").contains { $0.range(of: pattern, options: .regularExpression) != nil }
        }, "no row naming the running instances:\n\(session.screen())")
        let row = try #require(running.split(separator: "\n").first { $0.contains("test 1/4") }.map(String.init))
        #expect(!row.contains("tests/") && !row.contains(".py"), "\(row)")
        // Its time: at least the first instance's 1.5 s, which ended before the newest started.
        let seconds = row.split(separator: " ").compactMap { $0.hasSuffix("s") ? Double($0.dropLast()) : nil }.first
        #expect((seconds ?? 0) >= 1.5, "\(row)")
        try moon.write("release", "")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("✓ test 4/4 "), "\(done)")
        #expect(done.contains("MOON-EXIT=0"), "\(done)")
    }

    /// In a narrow terminal the names that do not fit are counted: `+N`.
    @Test func namesThatDoNotFitAreCounted() throws {
        let moon = try Moon(graph: """
            version: 1
            name: narrow
            queues: { default: { concurrency: 4 } }
            nodes:
              test:
                for-each: [alpha_long_name, beta_long_name, gamma_long_name, delta_long_name]
                run: while [ ! -e release ]; do sleep 0.05; done
            """)
        let session = TmuxSession(in: moon)
        session.start("run", width: 60)
        let running = try #require(session.waitFor { $0.contains("4 running") && $0.contains(" +") },
                                   "no row:\n\(session.screen())")
        let row = try #require(running.split(separator: "\n").first { $0.contains("test 0/4") }.map(String.init))
        #expect(row.count < 60, "\(row)")
        // A whole name, then how many more: no name cut in half.
        #expect(row.range(of: #"· [a-z]+_long_name(, [a-z]+_long_name)* \+[1-3]$"#, options: .regularExpression) != nil, "\(row)")
        try moon.write("release", "")
        _ = try #require(session.waitFor { $0.contains("MOON-EXIT=0") }, "\(session.screen())")
    }
}
