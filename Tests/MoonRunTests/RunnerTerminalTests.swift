import Foundation
import MoonCommand
import MoonEvents
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport

/// A terminal on virtual time: each question is answered after
/// `thinking` with the answer given for its node (yes unless told).
final class FakeTerminal: RunTerminal {
    let scheduler: TestScheduler
    var canAsk = true
    var answers: [String: Bool] = [:]
    var thinking: Duration = .seconds(5)
    /// "ask NODE", "answer NODE yes|no", "hand NODE", "back", "withdraw NODE", in order.
    var log: [String] = []

    init(scheduler: TestScheduler) { self.scheduler = scheduler }

    func ask(_ question: String, node: String, answer: @escaping (Bool) -> Void) -> Disposable {
        log.append("ask \(node)")
        let yes = answers[node] ?? true
        let pending = scheduler.schedule(after: thinking) { [weak self] in
            self?.log.append("answer \(node) \(yes ? "yes" : "no")")
            answer(yes)
        }
        return ActionDisposable { [weak self] in
            pending?.dispose()
            self?.log.append("withdraw \(node)")
        }
    }

    func handOver(node: String) { log.append("hand \(node)") }
    func takeBack() { log.append("back") }
}

extension RunNode {
    func asking(_ question: String) -> RunNode {
        var node = self
        node.confirm = question
        return node
    }

    var interactive: RunNode {
        var node = self
        node.isInteractive = true
        return node
    }
}

/// `confirm:` and `interactive:` in the runner (Runner+Terminal).
@Suite struct RunnerTerminalTests {
    func harness(_ nodes: [RunNode], options: RunOptions = RunOptions()) -> (RunHarness, FakeTerminal) {
        let h = RunHarness(nodes: nodes, options: options)
        let terminal = FakeTerminal(scheduler: h.scheduler)
        h.runner.terminal = terminal
        return (h, terminal)
    }

    @Test func aQuestionIsAskedAfterTheNeedsAndYesRunsTheNode() {
        let (h, terminal) = harness([node("build"), node("deploy", needs: [0]).asking("Deploy?"), node("after", needs: [1])])
        h.run()
        #expect(h.trace == ["start build#1", "complete build", "start deploy#1", "complete deploy", "start after#1", "complete after"])
        #expect(terminal.log == ["ask deploy", "answer deploy yes"])
        // Asked at 1 s (after build), answered at 6 s.
        #expect(h.startTime(of: "deploy") == 6)
        #expect(h.summary?.ok == true)
    }

    @Test func declinedSkipsTheNodeAndItsDependentsOnlyAndFailsTheRun() {
        let (h, terminal) = harness([node("deploy").asking("Deploy?"), node("after", needs: [0]), node("lint"),
                                     node("always", needs: [0], condition: .always)])
        terminal.answers["deploy"] = false
        h.run()
        #expect(h.trace.contains("skip deploy declined"))
        #expect(h.trace.contains("skip after declined"))
        #expect(h.trace.contains("complete lint"))
        #expect(h.trace.contains("complete always"))
        #expect(h.summary?.ok == false)
    }

    @Test func withoutATerminalTheNodeFailsAtOnceAndNothingWaits() {
        let (h, terminal) = harness([node("deploy").asking("Deploy?"), node("after", needs: [0])])
        terminal.canAsk = false
        h.run(until: 1)
        #expect(h.trace == ["error deploy spawn", "skip after upstream-failed"])
        #expect(h.summary != nil)
        let message = h.events.compactMap { event -> String? in
            if case .error(_, _, let error) = event.kind { return error.message }
            return nil
        }.first ?? ""
        #expect(message.contains("--yes"), "\(message)")
        #expect(terminal.log.isEmpty)
    }

    @Test func noTerminalAtAllIsNoTerminal() {
        let h = RunHarness(nodes: [node("deploy").asking("Deploy?")])
        h.run(until: 1)
        #expect(h.trace == ["error deploy spawn"])
    }

    @Test func yesAnswersWithoutAsking() {
        let (h, terminal) = harness([node("deploy").asking("Deploy?")], options: { var o = RunOptions(); o.assumeYes = true; return o }())
        terminal.canAsk = false
        h.run()
        #expect(h.trace == ["start deploy#1", "complete deploy"])
        #expect(terminal.log.isEmpty)
    }

    @Test func questionsAndInteractiveNodesTakeTheTerminalOneAtATimeWhileOthersRun() {
        let (h, terminal) = harness([node("a").asking("A?"), node("b").asking("B?"), node("shell").interactive, node("busy")])
        h.run()
        // One at a time, first come first served; busy started at once.
        #expect(terminal.log == ["ask a", "answer a yes", "ask b", "answer b yes", "hand shell", "back"])
        #expect(h.startTime(of: "busy") == 0)
        #expect(h.startTime(of: "shell") == 10)
        #expect(h.summary?.ok == true)
    }

    @Test func twoInteractiveNodesNeverRunTogether() {
        let (h, terminal) = harness([node("one").interactive, node("two").interactive])
        h.run()
        #expect(h.launcher.maxRunning == 1)
        #expect(terminal.log == ["hand one", "back", "hand two", "back"])
    }

    @Test func aStopWithdrawsTheQuestion() {
        let (h, terminal) = harness([node("deploy").asking("Deploy?"), node("slow")])
        h.runner.start()
        h.scheduler.advance(by: .seconds(1))
        h.runner.stop(.interrupt(signal: SIGINT))
        h.scheduler.advance(by: .seconds(100))
        #expect(terminal.log == ["ask deploy", "withdraw deploy"])
        #expect(h.trace.contains("skip deploy canceled"))
        #expect(h.summary != nil)
    }
}
