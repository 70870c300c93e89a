import Foundation
import MoonEvents
import Glibc
import Testing

/// A shell `run` with a long list value (a list var, many `-- ARGS`) is
/// prepared in time linear in its items, and one the system cannot start
/// (E2BIG) fails at once with its size and the limit: other nodes' output
/// and Ctrl-C are never held up.
@Suite struct LargeListTests {
    func graph(items: Int) -> String {
        let list = (0..<items).map(String.init).joined(separator: ",")
        return """
            version: 1
            vars:
              L: [\(list)]
            nodes:
              a: { run: "echo ${{ vars.L }} | wc -w" }
              args: { run: "echo ${{ args }} | wc -w" }
              t: { run: "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done" }
            """
    }

    /// The report's case H17: 100,000 items (the documented maximum) took
    /// 20 s on the event loop before failing with E2BIG, and no tick of `t`
    /// was reported meanwhile. Now `a` fails within seconds naming the size
    /// and the limit, and `t` ticks on.
    @Test func aHundredThousandItemListFailsAtOnce() throws {
        let moon = try Moon(graph: graph(items: 100_000))
        let started = Date()
        let result = try moon.run(["run", "a", "t", "-k", "--json"], limit: 60)
        #expect(result.status == 1, "\(result.stderr)")
        let message = result.error(of: "a")?.message ?? ""
        #expect(message.contains("bytes") && message.contains("limit"), "\(message)")
        #expect(result.printed("t") == (1...6).map { "tick \($0)" })
        // a failed before t's second tick (t takes 3 s in all).
        let events = result.events
        let failed = events.firstIndex { $0.name == "error" && $0.node == "a" }
        let secondTick = events.firstIndex { $0.node == "t" && $0.text == "tick 2" }
        #expect(failed != nil && secondTick != nil && failed! < secondTick!, "\(result.stdout)")
        #expect(Date().timeIntervalSince(started) < 30)
    }

    /// `moon run NODE -- $(seq 1 100000)`, and Ctrl-C during such a run is
    /// answered at once.
    @Test func manyArgumentsFailAtOnceAndCtrlCIsAnswered() throws {
        let moon = try Moon(graph: graph(items: 3))
        let started = Date()
        let result = try moon.run(["run", "args", "--json", "--"] + (1...100_000).map(String.init), limit: 60)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.error(of: "args")?.message.contains("limit") == true, "\(result.error(of: "args")?.message ?? result.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)

        // (`-- ARGS` go to the last node named.)
        let running = try moon.start(["run", "t", "args", "-k", "--json", "--"] + (1...100_000).map(String.init))
        // Ctrl-C in the middle of the run: t ticks (for 3 s), args has failed.
        #expect(eventually(30) { running.events.contains { $0.node == "t" && $0.text == "tick 1" } })
        running.signal(SIGINT)
        let sent = Date()
        let interrupted = try running.wait(limit: 30)
        #expect(Date().timeIntervalSince(sent) < 10)
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        #expect(interrupted.error(of: "args")?.message.contains("limit") == true, "\(interrupted.stdout)")
        #expect(interrupted.printed("t").first == "tick 1", "\(interrupted.stdout)")
        #expect(!interrupted.stdout.contains("canceled because another node failed"), "\(interrupted.stdout)")
    }

    /// A list that fits runs whole: one word per item.
    @Test func aListThatFitsRuns() throws {
        let moon = try Moon(graph: graph(items: 3_000))
        let result = try moon.run(["run", "a", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.printed("a").map { $0.trimmingCharacters(in: .whitespaces) } == ["3000"])
    }
}
