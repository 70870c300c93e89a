import Foundation
import MoonCommand
import MoonGraph
import Testing
@testable import MoonRun
import MoonEvents

@Suite struct OutputFileTests {
    @Test func readsLinesAndDelimitedValues() throws {
        let text = "a=1\nurl=http://x/?q=1=2\n\nnotes<<EOF\nline 1\n\nline 3\nEOF\nempty=\na=2\n"
        let values = try OutputFile.parse(text).get()
        #expect(values == [KeyValue("a", "2"), KeyValue("url", "http://x/?q=1=2"), KeyValue("notes", "line 1\n\nline 3"), KeyValue("empty", "")])
    }

    @Test func malformedFilesAreErrors() {
        let cases = [
            ("just text\n", "line 1: expected KEY=VALUE or KEY<<DELIMITER, found 'just text'"),
            ("ok=1\nbad key=2\n", "line 2: invalid output name 'bad key'"),
            ("v<<EOF\nno end\n", "line 1: no line 'EOF' ends the value of 'v'"),
            ("v<<\n", "line 1: 'v<<' needs a delimiter"),
        ]
        for (text, message) in cases {
            guard case .failure(let problem) = OutputFile.parse(text) else {
                Issue.record("\(text.debugDescription) parsed")
                continue
            }
            #expect(problem.message.hasPrefix(message), "\(problem.message)")
        }
    }

    @Test func aMissingFileHasNoOutputs() throws {
        #expect(try OutputFile.consume("/nonexistent/moon-output", parse: true)?.get() == [])
    }
}

@Suite struct InterpolatorTests {
    let interpolator = Interpolator(
        vars: Variables(["who": "world"]), env: ["HOME": "/home/me"],
        inputs: NodeInputs(values: [[], []], needs: ["a", "b"], outputs: ["a": ["x": "it's $(x)"]],
                           results: ["a": .success, "b": .failure]))

    @Test func resolvesEveryContext() throws {
        #expect(try interpolator.string("${{ vars.who }} ${{env.HOME}} ${{ needs.a.outputs.x }} ${{ needs.b.result }}")
            == "world /home/me it's $(x) failure")
        // A failed need has no outputs: "" (for `if: always` nodes).
        #expect(try interpolator.string("[${{ needs.b.outputs.x }}]") == "[]")
        // A shell script gets a reference; the value goes in the environment.
        let rendered = try interpolator.script("echo ${{ needs.a.outputs.x }}", shell: .sh)
        #expect(rendered.script == "echo \"${MOON_EXPR_1}\"")
        #expect(rendered.bindings == [ShellTemplate.Binding(name: "MOON_EXPR_1", value: "it's $(x)")])
    }

    @Test func explainsWhatIsMissing() {
        #expect(throws: Interpolator.Failure.self) { try interpolator.string("${{ env.NOPE }}") }
        #expect(throws: Interpolator.Failure.self) { try interpolator.string("${{ needs.a.outputs.y }}") }
        #expect(throws: Interpolator.Failure.self) { try interpolator.string("${{ needs.zz.result }}") }
        #expect(throws: Interpolator.Failure.self) { try interpolator.string("${{ vars.nope }}") }
    }

    @Test func aValueIsNeverReadAgain() throws {
        let i = Interpolator(vars: Variables(["a": "${{ vars.b }}", "b": "secret"]), env: [:], inputs: NodeInputs(values: []))
        #expect(try i.string("${{ vars.a }}") == "${{ vars.b }}")
    }
}

/// A launcher whose attempts end at once, with the outputs given per node.
final class OutputsLauncher: NodeLauncher {
    var outputs: [Int: [KeyValue]] = [:]
    var failing: Set<Int> = []
    private(set) var inputs: [Int: NodeInputs] = [:]

    func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
        Signal { [self] observer, _ in
            self.inputs[node] = inputs
            if failing.contains(node) {
                observer.send(error: NodeError(.exit, "exited with code 1", exitCode: 1))
            } else {
                observer.send(next: .exited(code: 0))
                observer.send(next: .outputs(outputs[node] ?? []))
                observer.sendCompleted()
            }
        }
    }

    func settled(node: Int) -> Signal<Never> { .empty }
    func killNow() {}
}

@Suite struct RunnerDataFlowTests {
    @Test func needsOutputsAndResultsReachTheAttempt() {
        let scheduler = TestScheduler()
        let launcher = OutputsLauncher()
        launcher.outputs = [0: [KeyValue("sha", "abc")]]
        launcher.failing = [1]
        let nodes = [node("a"), node("b"), node("c", needs: [0, 1], condition: .always), node("d", needs: [1])]
        let plan = RunPlan(graphName: "t", nodes: nodes, queues: [QueueWidth(name: "default", concurrency: 4)])
        var completes: [String: [KeyValue]] = [:]
        let runner = Runner(plan: plan, options: RunOptions(keepGoing: true), launcher: launcher, scheduler: scheduler) { event in
            if case .complete(let n, _, _, let outputs) = event.kind { completes[n] = outputs }
        }
        runner.start()
        scheduler.advance(by: .seconds(10))
        #expect(completes["a"] == [KeyValue("sha", "abc")])
        let c = launcher.inputs[2]
        #expect(c?.needs == ["a", "b"])
        #expect(c?.outputs["a"] == ["sha": "abc"])
        #expect(c?.outputs["b"] == [:])
        #expect(c?.results == ["a": .success, "b": .failure])
        #expect(launcher.inputs[3] == nil, "d is skipped: its need failed")
    }
}

@Suite struct ReadsInputsTests {
    /// Only nodes that can read their needs' values, outputs or results get
    /// them gathered (for a node of 20 needs: two 20-entry dictionaries).
    @Test func onlyNodesWithExpressionsOrBuiltinsReadInputs() throws {
        let text = """
            version: 1
            vars: { sub: "." }
            nodes:
              a: { run: "true" }
              b: { needs: [a], run: "echo ${{ needs.a.outputs.x }}" }
              c: { needs: [a], run: "true", env: { X: "${{ needs.a.result }}" } }
              d: { needs: [a], run: [echo, "${{ needs.a.outputs.y }}"] }
              e: { needs: [a], uses: reduce, with: { op: list } }
              f: { needs: [a], run: "echo $HOME", dir: "${{ vars.sub }}" }
              g: { needs: [a], run: [echo, plain] }
            """
        let graph = try slurmTestGraph(text, path: "/work/t.yaml")
        let plan = try Plan.make(graph: graph, targets: [])
        let reads = Dictionary(uniqueKeysWithValues: RunPlan(graph: graph, plan: plan, cpus: 2).nodes.map { ($0.name, $0.readsInputs) })
        #expect(reads == ["a": false, "b": true, "c": true, "d": true, "e": true, "f": true, "g": false])
    }
}
