import Foundation
import MoonEvents
import Testing

/// `moon simulate` on the built binary: its prediction against real runs of
/// a graph of sleeps, measured in the test.
@Suite(.serialized) struct SimulateTests {
    /// Six sleeps, two chains and a join: -j 1 runs them one by one (3.2 s), -j 2 about halves it.
    static let sleeps = """
        version: 1
        queues:
          wide: {concurrency: 8}
        defaults:
          queue: wide
        nodes:
          a: {run: sleep 0.6}
          b: {run: sleep 0.3, needs: [a]}
          c: {run: sleep 0.8}
          d: {run: sleep 0.4, needs: [c]}
          e: {run: sleep 0.6}
          f: {run: sleep 0.5, needs: [b, d]}
        """

    /// `graph-complete`'s duration.
    static func wall(_ result: Moon.Result) -> Int? {
        for event in result.events {
            if case .graphComplete(_, let ms, _, _) = event.kind { return ms }
        }
        return nil
    }

    static func lines(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
    }

    @Test func itPredictsRealRunsOfSleepsWithinFifteenPercent() throws {
        let moon = try Moon(graph: Self.sleeps)
        // A first run records each node's duration.
        #expect(try moon.run(["--json", "-j", "2"]).status == 0)
        let realOne = try moon.run(["--json", "-j", "1"])
        let realTwo = try moon.run(["--json", "-j", "2"])
        let one = try #require(Self.wall(realOne))
        let two = try #require(Self.wall(realTwo))
        let simulated = try moon.run(["simulate", "-j", "1,2", "--json"])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let lines = try Self.lines(simulated.stdout)
        #expect(lines.count == 2)
        #expect(lines.map { $0["jobs"] as? Int } == [1, 2])
        guard lines.count == 2, let predictedOne = lines[0]["wall_ms"] as? Int, let predictedTwo = lines[1]["wall_ms"] as? Int else {
            Issue.record("no wall_ms: \(simulated.stdout)")
            return
        }
        #expect(abs(Double(predictedOne - one)) <= 0.15 * Double(one), "-j 1: predicted \(predictedOne) ms, ran \(one) ms")
        #expect(abs(Double(predictedTwo - two)) <= 0.15 * Double(two), "-j 2: predicted \(predictedTwo) ms, ran \(two) ms")
        #expect(lines[1]["critical_path"] as? [String] == ["c", "d", "f"])
        // Text: the same figures, side by side.
        let text = try moon.run(["simulate", "-j", "1,2"])
        #expect(text.stdout.contains("6 nodes simulated: 6 from recorded durations"), "\(text.stdout)")
        #expect(text.stdout.contains("critical path: c → d → f"))
        #expect(text.stdout.contains("-j 2: "))
    }

    @Test func aNodeNeverSeenTakesTheDefaultAndNothingIsWritten() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fresh: {run: sleep 5}
            """)
        let result = try moon.run(["simulate", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"wall_ms\":1000"), "\(result.stdout)")
        #expect(result.stdout.contains("\"jobs\":null"))
        #expect(moon.read(".moon/state.db") == nil, "simulate writes no state")
        let text = try moon.run(["simulate"])
        #expect(text.stdout.contains("1 never seen"), "\(text.stdout)")
        let bad = try moon.run(["simulate", "-j", "2,zero"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("-j: '2,zero' is not a list of job counts"), "\(bad.stderr)")
    }
}
