import Foundation
import MoonEvents
import Testing

/// One wording for a fan-out's line, static or expanded during the run,
/// counted from its instances alone: `✓ test 3/3 up to date`,
/// `✓ test 3/3 (2 up to date, 1 restored)`, `✗ agg 2/3 (1 failed)`; and a
/// result line that says what happened (`ok - 5 up to date`), without
/// counting a template as a node.
@Suite struct SummaryWordingTests {
    static let graph = """
        version: 1
        name: words
        nodes:
          gen:
            sources: [in.txt]
            run: echo 'list=["x","y","z"]' >> "$MOON_OUTPUT"
          test:
            for-each: [a, b, c]
            sources: [in.txt]
            generates: ["out/${{ item }}.txt"]
            run: mkdir -p out && echo ${{ item }} > out/${{ item }}.txt
          agg:
            needs: [gen]
            for-each: ${{ needs.gen.outputs.list }}
            sources: [in.txt]
            run: |
              echo agg ${{ item }}
              test ${{ item }} != "$(cat fail 2>/dev/null)"
          one:
            sources: [in.txt]
            run: echo one
          all:
            needs: [test, one]
        """

    func lines(_ result: Moon.Result) -> [String] {
        result.stdout.split(separator: "\n").map(String.init)
    }

    /// Runs moon with its own output cache, so no other test's entries are restored.
    func run(_ moon: Moon, _ arguments: [String]) throws -> Moon.Result {
        try moon.run(arguments, environment: ["MOON_CACHE_DIR": moon.path("cache")])
    }

    @Test func aNoOpSaysUpToDateForFanOutsAndInItsResultLine() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "1")
        let first = try run(moon, ["run", "-j", "1"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // 1 gen + 3 test + 3 agg + 1 one + the group all: the template `agg` is not a tenth.
        #expect(lines(first).last?.hasPrefix("moon: ok - 9 succeeded in ") == true, "\(first.stdout)")
        #expect(lines(first).contains { $0.hasPrefix("✓ agg 3/3 ") }, "\(first.stdout)")
        #expect(!first.stdout.contains("slowest: agg "), "a template's span is not a node's time:\n\(first.stdout)")

        let noOp = try run(moon, ["run"])
        #expect(lines(noOp).contains("✓ test 3/3 up to date"), "\(noOp.stdout)")
        #expect(lines(noOp).contains("✓ agg 3/3 up to date"), "\(noOp.stdout)")
        // A group whose needs were all up to date is up to date too.
        #expect(lines(noOp).contains("- all skipped (up-to-date)"), "\(noOp.stdout)")
        #expect(lines(noOp).last?.hasPrefix("moon: ok - 9 up to date in ") == true, "\(noOp.stdout)")
        #expect(!noOp.stdout.contains("succeeded") && !noOp.stdout.contains("skipped,"), "\(noOp.stdout)")

        let json = try run(moon, ["run", "--json"])
        let counts = try #require(json.events("graph-complete").first?.counts)
        #expect(counts.succeeded == 0 && counts.failed == 0 && counts.skipped == 9 && counts.canceled == 0, "\(counts)")
    }

    @Test func restoredInstancesAreCountedByKind() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "1")
        _ = try run(moon, ["run"])
        try FileManager.default.removeItem(atPath: moon.path("out/b.txt"))
        let again = try run(moon, ["run"])
        #expect(lines(again).contains("✓ test 3/3 (2 up to date, 1 restored)"), "\(again.stdout)")
        #expect(lines(again).last?.hasPrefix("moon: ok - 8 up to date, 1 restored from the cache (2 B) in ") == true, "\(again.stdout)")
        // Everything restored: the way, without a count.
        try FileManager.default.removeItem(atPath: moon.path("out"))
        let restored = try run(moon, ["run"])
        #expect(lines(restored).contains("✓ test 3/3 restored from the cache"), "\(restored.stdout)")
    }

    @Test func aFailedInstanceGivesItsFanOutOneLineStaticOrExpandedAtRunTime() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "1")
        try moon.write("fail", "y")
        let failed = try run(moon, ["run", "-k"])
        #expect(failed.status == 1)
        #expect(lines(failed).contains { $0.hasPrefix("✗ agg 2/3 (1 failed) ") }, "\(failed.stdout)")
        #expect(!failed.stdout.contains("agg skipped"), "\(failed.stdout)")
        #expect(lines(failed).last?.hasPrefix("moon: FAILED - 8 succeeded, 1 failed in ") == true, "\(failed.stdout)")

        // A static fan-out stopped by fail-fast: its failure and its cancelled sibling.
        let other = try Moon(graph: """
            version: 1
            name: stop
            nodes:
              t:
                for-each: [fails, waits]
                run: |
                  if [ ${{ item }} = fails ]; then exit 3; fi
                  while :; do sleep 0.05; done
            """)
        let stopped = try other.run(["run", "-j", "2"])
        #expect(lines(stopped).contains { $0.hasPrefix("✗ t 0/2 (1 failed, 1 canceled) ") }, "\(stopped.stdout)")
        #expect(lines(stopped).last?.hasPrefix("moon: FAILED - 0 succeeded, 1 failed, 1 canceled in ") == true, "\(stopped.stdout)")
    }

    /// `moon status` puts every verdict in one column, however long the
    /// names; a name too long for the column has a line of its own.
    @Test func statusAlignsLongInstanceNames() throws {
        let long = String(repeating: "x", count: 70)
        let moon = try Moon(graph: """
            version: 1
            name: wide
            nodes:
              test:
                for-each: [tests/test_init_subclass.py, tests/test_pattern_matching.py, a.py, \(long).py]
                run: "true"
              lint:
                run: "true"
            """)
        let status = try moon.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        let rows = lines(status)
        // Where each verdict starts: after the name and the spaces that follow it.
        let columns = rows.filter { $0 != "test[\(long).py]" }.map { row -> Int in
            let name = row.prefix { $0 != " " }
            return name.count + row.dropFirst(name.count).prefix { $0 == " " }.count
        }
        #expect(columns.count == 5 && Set(columns).count == 1, "verdicts out of line:\n\(status.stdout)")
        #expect(columns.first == "test[tests/test_pattern_matching.py]".count + 2, "\(status.stdout)")
        let i = try #require(rows.firstIndex(of: "test[\(long).py]"), "its own line:\n\(status.stdout)")
        #expect(rows[i + 1].hasPrefix(" "), "\(status.stdout)")
    }
}
