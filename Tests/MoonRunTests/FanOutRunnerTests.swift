import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonTestSupport
import MoonEvents

/// A node whose items come from a need's output (`for-each: ${{
/// needs.shards.outputs.files }}`), and group nodes, on virtual time.
@Suite struct FanOutRunnerTests {
    /// `shards` writes `files`; `process` fans out over it; `after` needs `process`.
    func harness(files: String?, options: RunOptions = RunOptions(), retry: RetryPolicy = .none,
                 scripts: [String: FakeLauncher.Script] = [:]) -> RunHarness {
        var shards = scripts["shards"] ?? FakeLauncher.Script()
        if let files { shards.outputs = [KeyValue("files", files)] }
        var process = node("process", needs: [0], retry: retry)
        process.fanOut = RunNode.FanOut(need: 0, key: "files")
        var all = scripts
        all["shards"] = shards
        return RunHarness(nodes: [node("shards"), process, node("after", needs: [1])], options: options, scripts: all)
    }

    @Test func eachItemBecomesAnInstanceThatRunsWhenTheNeedCompletes() {
        let h = harness(files: #"["a.txt","b.txt"]"#)
        h.run()
        #expect(h.trace == ["start shards#1", "complete shards", "expand process [process[a.txt], process[b.txt]]",
                            "start process[a.txt]#1", "start process[b.txt]#1", "complete process[a.txt]",
                            "complete process[b.txt]", "complete process", "start after#1", "complete after"])
        // The instances start at the instant `shards` completes; `after` once both ended.
        #expect(h.startTime(of: "process[a.txt]") == 1)
        #expect(h.startTime(of: "process[b.txt]") == 1)
        #expect(h.startTime(of: "after") == 2)
        #expect(h.launcher.expansions.map(\.template) == [1])
        #expect(h.launcher.expansions.first?.items == ["a.txt", "b.txt"])
        #expect(h.summary?.ok == true)
        #expect(h.summary?.nodes.map(\.name) == ["shards", "process", "after", "process[a.txt]", "process[b.txt]"])
        // The instances count, not the template they expanded.
        #expect(h.summary?.counts.succeeded == 4)
        #expect(h.summary?.criticalPath == ["shards", "process[a.txt]", "after"])
    }

    @Test func instanceEventsNameTheirTemplateAndItem() {
        let h = harness(files: #"["a.txt"]"#)
        h.run()
        let events = h.events.filter { $0.node == "process[a.txt]" }
        #expect(events.map(\.name) == ["start", "complete"])
        #expect(events.allSatisfy { $0.instance == RunEvent.Instance(template: "process", item: "a.txt") })
        #expect(h.events.filter { $0.node == "shards" || $0.node == "after" }.allSatisfy { $0.instance == nil })
        // Instances read what the template's needs left it.
        let index = h.runner.plan.nodes.firstIndex { $0.name == "process[a.txt]" }
        #expect(index.flatMap { h.launcher.inputsSeen[$0]?.outputs["shards"] } == ["files": #"["a.txt"]"#])
    }

    @Test func eachInstanceRetriesOnItsOwn() {
        let h = harness(files: #"["a","b"]"#, retry: RetryPolicy(times: 1), scripts: ["process[b]": .init(exitCodes: [1: 1])])
        h.run()
        #expect(h.trace.filter { $0.hasPrefix("retry") } == ["retry process[b]#1 0ms"])
        #expect(h.startTime(of: "process[b]", attempt: 2) == 2)
        #expect(h.startTime(of: "process[a]", attempt: 2) == nil)
        #expect(h.summary?.nodes.first { $0.name == "process[b]" }?.attempts == 2)
        #expect(h.summary?.ok == true)
    }

    @Test func instancesShareTheQueueAndJobs() {
        let items = "[" + (0..<10).map { "\"f\($0)\"" }.joined(separator: ",") + "]"
        let h = harness(files: items, options: RunOptions(jobs: 2))
        h.run()
        #expect(h.launcher.maxRunning == 2)
        #expect(h.startTime(of: "after") == 6)
        #expect(h.summary?.counts.succeeded == 12)
    }

    @Test(arguments: [
        (#"{"a": 1}"#, #"{"a": 1}"#),
        (#"[1, 2]"#, "[1, 2]"),
        (#"["a", null]"#, #"["a", null]"#),
        ("a.txt", "a.txt"),
        ("", "'' (empty)"),
        (#"["a","a"]"#, "'a' twice"),
        (#"["line\nbreak"]"#, "control character"),
        (#"["a", ""]"#, "an empty item"),
    ])
    func aValueThatIsNotAListOfStringsFailsTheFanningOutNode(value: String, quoted: String) {
        let h = harness(files: value)
        h.run()
        #expect(h.trace == ["start shards#1", "complete shards", "error process fan-out", "skip after upstream-failed"])
        guard case .error(_, _, let error)? = h.events.first(where: { $0.node == "process" })?.kind else {
            Issue.record("no error for process"); return
        }
        #expect(error.message.contains("needs.shards.outputs.files"), "\(error.message)")
        #expect(error.message.contains(quoted), "\(error.message)")
        #expect(h.summary?.ok == false)
        #expect(h.launcher.expansions.isEmpty)
    }

    @Test func aMissingOutputFailsTheFanningOutNode() {
        let h = harness(files: nil)
        h.run()
        guard case .error(_, _, let error)? = h.events.first(where: { $0.node == "process" })?.kind else {
            Issue.record("no error for process"); return
        }
        #expect(error.kind == .fanOut)
        #expect(error.message.contains("'shards' set no output 'files'"), "\(error.message)")
    }

    @Test func onlyTheFirstBytesOfALongValueAreQuoted() {
        let h = harness(files: "{" + String(repeating: "x", count: 10_000) + "}")
        h.run()
        guard case .error(_, _, let error)? = h.events.first(where: { $0.node == "process" })?.kind else {
            Issue.record("no error for process"); return
        }
        #expect(error.message.count < 300, "\(error.message)")
        #expect(error.message.contains("{xxxx"))
    }

    @Test func anEmptyListSucceedsWithNoInstance() {
        let h = harness(files: "[]")
        h.run()
        #expect(h.trace == ["start shards#1", "complete shards", "expand process []", "complete process", "start after#1",
                            "complete after"])
        #expect(h.summary?.ok == true)
    }

    @Test func aFailedInstanceSkipsWhatNeedsTheTemplate() {
        let h = harness(files: #"["a","b"]"#, options: RunOptions(keepGoing: true),
                        scripts: ["process[b]": .init(exitCodes: [1: 1]), "process[a]": .init(duration: 3)])
        h.run()
        #expect(h.trace.contains("error process[b] exit"))
        #expect(h.trace.contains("complete process[a]"))
        #expect(h.trace.suffix(2) == ["skip process upstream-failed", "skip after upstream-failed"])
        #expect(h.summary?.ok == false)
        #expect(h.summary?.counts.failed == 1)
        // `after` skipped; `process`, expanded, is counted as its instances.
        #expect(h.summary?.counts.skipped == 1)
    }

    @Test func failFastCancelsTheOtherInstances() {
        let h = harness(files: #"["a","b"]"#, scripts: ["process[b]": .init(exitCodes: [1: 1]), "process[a]": .init(duration: 3)])
        h.run()
        #expect(h.trace.contains("error process[a] canceled"))
        #expect(h.summary?.stopReason == .failure)
    }

    @Test func aFailedNeedSkipsTheTemplateWithoutExpanding() {
        let h = harness(files: #"["a"]"#, scripts: ["shards": .init(exitCodes: [1: 1])])
        h.run()
        #expect(h.trace == ["start shards#1", "error shards exit", "skip process upstream-failed", "skip after upstream-failed"])
        #expect(h.launcher.expansions.isEmpty)
    }

    @Test func anInterruptWhileInstancesRunCancelsThem() {
        let h = harness(files: #"["a","b"]"#, scripts: ["process[a]": .init(duration: 5), "process[b]": .init(duration: 5)])
        h.runner.start()
        h.scheduler.advance(by: .seconds(2))
        h.runner.stop(.interrupt(signal: 2))
        h.scheduler.advance(by: .seconds(10))
        #expect(h.trace.suffix(4) == ["error process[a] canceled", "error process[b] canceled", "skip process canceled",
                                      "skip after canceled"] || h.trace.suffix(4) == ["error process[a] canceled",
                                      "skip process canceled", "skip after canceled", "error process[b] canceled"])
        #expect(h.summary?.counts.canceled == 2)
        #expect(h.summary != nil)
    }

    /// A checker that takes an expansion is asked about its instances as
    /// about any node: an up-to-date instance is skipped, the other runs.
    @Test func instancesAreCheckedWhenTheCheckerTakesThem() {
        final class ExpandingChecker: UpToDateChecking {
            let inner = FakeChecker()
            var expansions: [(template: Int, items: [String], first: Int)] = []
            func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? { inner.upToDate(node: node, inputs: inputs) }
            func succeeded(node: Int, outputs: [KeyValue], values: [String]) { inner.succeeded(node: node, outputs: outputs, values: values) }
            func expand(template: Int, items: [String], first: Int) -> Bool {
                expansions.append((template, items, first))
                return true
            }
        }
        let h = harness(files: #"["a","b"]"#)
        let checker = ExpandingChecker()
        checker.inner.upToDate[3] = RestoredResult()
        h.runner.upToDate = checker
        h.run()
        #expect(checker.expansions.map(\.template) == [1] && checker.expansions.first?.first == 3)
        #expect(checker.inner.asked.sorted() == [0, 2, 3, 4])
        #expect(checker.inner.succeeded.sorted() == [0, 2, 4])
        #expect(h.trace.contains("skip process[a] up-to-date") && h.trace.contains("start process[b]#1"), "\(h.trace)")
        #expect(h.summary?.ok == true)
    }

    /// A checker that declines (the default) is never asked about instances
    /// made during the run: it knows only the plan's nodes.
    @Test func instancesMadeDuringTheRunAreNotCheckedForUpToDate() {
        let h = harness(files: #"["a"]"#)
        let checker = FakeChecker()
        h.runner.upToDate = checker
        h.run()
        #expect(checker.asked.sorted() == [0, 2])
        #expect(checker.succeeded.sorted() == [0, 2])
        #expect(h.summary?.ok == true)
    }

    @Test func aGroupSucceedsAtOnceWithoutAJob() {
        var all = node("all", needs: [0, 1])
        all.isGroup = true
        let h = RunHarness(nodes: [node("a"), node("b"), all, node("c", needs: [2])], options: RunOptions(jobs: 1))
        h.run()
        #expect(h.trace == ["start a#1", "complete a", "start b#1", "complete b", "complete all", "start c#1", "complete c"])
        #expect(h.launcher.starts.count == 3)
        guard case .complete(_, let ms, let code, _)? = h.events.first(where: { $0.node == "all" })?.kind else {
            Issue.record("no complete for all"); return
        }
        #expect(ms == 0 && code == nil)
        #expect(h.startTime(of: "c") == 2)
        #expect(h.summary?.criticalPath == ["b", "c"] || h.summary?.criticalPath == ["a", "c"])
    }

    @Test func aGroupWithAFailedNeedIsSkipped() {
        var all = node("all", needs: [0])
        all.isGroup = true
        let h = RunHarness(nodes: [node("bad"), all], scripts: ["bad": .init(exitCodes: [1: 1])])
        h.run()
        #expect(h.trace == ["start bad#1", "error bad exit", "skip all upstream-failed"])
    }

    @Test func aGroupWithoutNeedsSucceedsAtTheStart() {
        var all = node("all")
        all.isGroup = true
        let h = RunHarness(nodes: [all])
        h.run()
        #expect(h.trace == ["complete all"])
        #expect(h.summary?.ok == true)
    }
}
