import Foundation
import MoonEvents
import Testing

/// Ctrl-C, SIGTERM, timeouts and fail-fast leave no process behind.
@Suite(.serialized) struct CancellationTests {
    /// A graph whose nodes record their pids (and a background child's) and wait.
    static let sleepers = """
        version: 1
        nodes:
          stubborn:
            run: trap '' TERM; echo $$ > stubborn.pid; sleep 100 & echo $! > stubborn-child.pid; wait
          plain:
            run: echo $$ > plain.pid; sleep 100
        """

    func pids(_ moon: Moon, _ names: [String]) -> [Int32] {
        names.compactMap { moon.read($0).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } }
    }

    @Test func ctrlCEndsWith130AndLeavesNothingRunning() throws {
        let moon = try Moon(graph: Self.sleepers)
        let running = try moon.start(["run", "--grace", "500ms"])
        #expect(eventually { pids(moon, ["stubborn.pid", "stubborn-child.pid", "plain.pid"]).count == 3 })
        let started = pids(moon, ["stubborn.pid", "stubborn-child.pid", "plain.pid"])
        running.signal(SIGINT)
        let result = try running.wait(limit: 20)
        #expect(result.status == 130)
        for pid in started { #expect(!isAlive(pid, of: moon), "pid \(pid) survived") }
    }

    @Test func sigtermEndsWith143() throws {
        let moon = try Moon(graph: Self.sleepers)
        let running = try moon.start(["run", "--grace", "200ms"])
        #expect(eventually { pids(moon, ["stubborn.pid", "plain.pid"]).count == 2 })
        running.signal(SIGTERM)
        #expect(try running.wait(limit: 20).status == 143)
    }

    @Test func aSecondCtrlCKillsAtOnce() throws {
        let moon = try Moon(graph: Self.sleepers)
        let running = try moon.start(["run", "--grace", "60s"])
        #expect(eventually { pids(moon, ["stubborn.pid", "plain.pid"]).count == 2 })
        let stubborn = pids(moon, ["stubborn.pid"])
        let plain = pids(moon, ["plain.pid"])
        running.signal(SIGINT)
        // The first Ctrl-C has been acted on once `plain` (which obeys
        // SIGTERM) is gone; `stubborn` ignores SIGTERM, so moon waits out
        // the grace period for it.
        #expect(eventually { plain.allSatisfy { !isAlive($0, of: moon) } }, "the first Ctrl-C sends SIGTERM")
        #expect(stubborn.allSatisfy { isAlive($0, of: moon) }, "the first Ctrl-C does not kill")
        #expect(running.process.isRunning, "the first Ctrl-C waits for the grace period")
        running.signal(SIGINT)
        let result = try running.wait(limit: 10)
        #expect(result.status == 130)
        for pid in stubborn { #expect(!isAlive(pid, of: moon)) }
    }

    @Test func aTimeoutKillsTheNodesWholeGroup() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow:
                run: sleep 100 & echo $! > child.pid; sleep 100
                timeout: 300ms
            """)
        let result = try moon.run(["run", "--json", "--grace", "200ms"], limit: 20)
        #expect(result.status == 1)
        let child = pids(moon, ["child.pid"])
        #expect(child.count == 1)
        for pid in child { #expect(!isAlive(pid, of: moon)) }
    }

    @Test func aBackgroundChildDoesNotOutliveItsNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              leaves:
                run: sleep 100 & echo $! > bg.pid; echo started
              next:
                needs: leaves
                run: 'kill -0 $(cat bg.pid) 2>/dev/null && echo alive || echo gone'
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0)
        #expect(result.events("next", node: "next").first?.text == "gone")
    }

    @Test func failFastCancelsRunningNodes() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow: { run: echo $$ > slow.pid; sleep 100 }
              bad: { run: sleep 0.3; exit 1 }
            """)
        let result = try moon.run(["run", "--json", "--grace", "1s"], limit: 20)
        #expect(result.status == 1)
        let error = result.events("error", node: "slow").first?.error
        #expect(error?.kind == .canceled)
        for pid in pids(moon, ["slow.pid"]) { #expect(!isAlive(pid, of: moon)) }
    }
}
