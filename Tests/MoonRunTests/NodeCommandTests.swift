import Foundation
import Glibc
import MoonCommand
import MoonEvents
import MoonGraph
import MoonProcess
import Testing
@testable import MoonRun

/// A `ProcessLaunching` whose processes are driven by the test: each launch
/// is recorded, prints and exits when the test says, and records the
/// signals the node's command sends it.
final class FakeProcesses: ProcessLaunching, @unchecked Sendable {
    final class Process: ProcessHandle, @unchecked Sendable {
        let pid: pid_t
        let spec: ProcessSpec
        private let onOutput: @Sendable (OutputLine) -> Void
        private let onExit: @Sendable (Termination) -> Void
        /// The grace of every `terminate`, in order.
        private(set) var terminations: [Duration] = []
        private(set) var kills = 0

        init(pid: pid_t, spec: ProcessSpec, onOutput: @escaping @Sendable (OutputLine) -> Void,
             onExit: @escaping @Sendable (Termination) -> Void) {
            self.pid = pid
            self.spec = spec
            self.onOutput = onOutput
            self.onExit = onExit
        }

        private(set) var hasExited = false

        // Signals reach only a process not yet reaped, as `ProcessHandle` says.
        func terminate(grace: Duration) { if !hasExited { terminations.append(grace) } }
        func kill() { if !hasExited { kills += 1 } }

        func print(_ text: String, _ stream: OutputLine.Stream = .stdout) {
            onOutput(OutputLine(stream: stream, bytes: Array(text.utf8)))
        }

        func exit(_ termination: Termination) {
            hasExited = true
            onExit(termination)
        }

        /// The `$MOON_OUTPUT` file the node was given.
        var outputFile: String? { spec.environment["MOON_OUTPUT"] }
    }

    private(set) var launched: [Process] = []

    func launch(_ spec: ProcessSpec, onOutput: @escaping @Sendable (OutputLine) -> Void,
                onExit: @escaping @Sendable (Termination) -> Void) throws -> any ProcessHandle {
        let process = Process(pid: pid_t(1000 + launched.count), spec: spec, onOutput: onOutput, onExit: onExit)
        launched.append(process)
        return process
    }
}

/// What a subscriber of a node's attempt (or of its command's shared
/// events) received, as short strings.
final class Received: @unchecked Sendable {
    private(set) var trace: [String] = []
    private(set) var errors: [Error] = []

    func record(_ event: Event<NodeOutput>) {
        switch event {
        case .next(let output): trace.append(Self.describe(output))
        case .completed: trace.append("completed")
        case .error(let error):
            errors.append(error)
            if let node = error as? NodeError {
                trace.append("error \(node.kind.rawValue): \(node.message)")
            } else {
                trace.append("error \(error)")
            }
        }
    }

    static func describe(_ output: NodeOutput) -> String {
        switch output {
        case .line(let stream, let text, _): return "\(stream.rawValue) \(text)"
        case .partial(_, let text): return "partial \(text)"
        case .value(let value): return "value \(value)"
        case .exited(let code): return "exited \(code)"
        case .outputs(let outputs): return "outputs " + outputs.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        case .job(let id): return "job \(id)"
        case .waiting(let waiting): return "waiting \(waiting)"
        }
    }
}

/// A node's command (`NodeCommand`, through `CommandLauncher`) on fake
/// processes and virtual time: one command per node for the run, each
/// attempt an execution of it.
@Suite struct NodeCommandTests {
    let scheduler = TestScheduler()
    let processes = FakeProcesses()
    let grace = Duration.seconds(3)

    private func launcher(_ nodes: String) throws -> CommandLauncher {
        let graph = try slurmTestGraph("version: 1\nnodes:\n" + nodes, path: "/tmp/moon-node-command-test/moon.yaml")
        let plan = try Plan.make(graph: graph)
        names.list = plan.selected.map { graph.nodes[$0].name }
        return CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler, grace: grace,
                               environment: ["PATH": "/usr/bin:/bin"])
    }

    /// The plan's node names, by plan index (set by `launcher`).
    private let names = Names()
    final class Names: @unchecked Sendable { var list: [String] = [] }

    /// Starts attempt `number` of the node and runs the scheduler until its
    /// process is launched.
    private func start(_ launcher: CommandLauncher, _ name: String, number: Int = 1) throws -> (Received, Disposable) {
        let node = try #require(names.list.firstIndex(of: name))
        let received = Received()
        let subscription = launcher.attempt(node: node, number: number, inputs: NodeInputs(values: [])).start { received.record($0) }
        scheduler.advance()
        return (received, subscription)
    }

    @Test func disposingAnAttemptTerminatesItsProcessWithTheGraceAndTheNodeSettlesAtItsExit() throws {
        let launcher = try launcher("  a: { run: sleep 100 }\n")
        let (received, subscription) = try start(launcher, "a")
        let process = try #require(processes.launched.first)
        let settled = Received()
        _ = launcher.settled(node: 0).start { _ in settled.record(.completed) }
        #expect(settled.trace.isEmpty, "its process runs")
        subscription.dispose()
        #expect(process.terminations == [grace])
        #expect(received.trace.isEmpty, "a cancelled attempt sends nothing more")
        #expect(settled.trace.isEmpty, "its process lives through the grace period")
        process.exit(.signaled(SIGTERM))
        #expect(settled.trace == ["completed"])
    }

    @Test func exitCodesBecomeTheAttemptsEndOrANodeError() throws {
        let launcher = try launcher("""
              ok: { run: "true" }
              fails: { run: "false" }
              killed: { run: "true" }
              tolerated: { run: "true", success-codes: [0, 3] }
              zeroLeftOut: { run: "true", success-codes: [3] }

            """)
        let ends: [(String, Termination, String)] = [
            ("ok", .exited(0), "exited 0 | completed"),
            ("fails", .exited(2), "error exit: exited with code 2"),
            ("killed", .signaled(SIGKILL), "error signal: killed by SIGKILL"),
            ("tolerated", .exited(3), "exited 3 | completed"),
            ("zeroLeftOut", .exited(0), "error exit: exited with code 0, which its success-codes leave out"),
        ]
        for (name, termination, expected) in ends {
            let (received, _) = try start(launcher, name)
            let process = try #require(processes.launched.last)
            process.print("hello")
            process.exit(termination)
            #expect(received.trace == ["stdout hello"] + expected.components(separatedBy: " | "), "\(name)")
            if name == "fails" { #expect((received.errors.first as? NodeError)?.exitCode == 2) }
        }
    }

    @Test func moonOutputIsParsedOnlyFromAnAttemptThatSucceeded() throws {
        let launcher = try launcher("""
              writes: { run: "true" }
              malformed: { run: "true" }
              failsAfterWriting: { run: "true" }

            """)
        let cases: [(String, Termination, [String])] = [
            ("a=1\nnotes<<EOF\nx\ny\nEOF\n", .exited(0), ["exited 0", "outputs a=1,notes=x\ny", "completed"]),
            ("just text\n", .exited(0),
             ["exited 0", "error exit: exited with code 0, but its $MOON_OUTPUT is malformed: line 1: expected KEY=VALUE or KEY<<DELIMITER, found 'just text'"]),
            ("a=1\n", .exited(1), ["error exit: exited with code 1"]),
        ]
        for (name, (text, termination, expected)) in zip(["writes", "malformed", "failsAfterWriting"], cases) {
            let (received, _) = try start(launcher, name)
            let process = try #require(processes.launched.last)
            let file = try #require(process.outputFile)
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            process.exit(termination)
            #expect(received.trace.count == expected.count && zip(received.trace, expected).allSatisfy { $0.hasPrefix($1) },
                    "\(name): \(received.trace)")
            #expect(!FileManager.default.fileExists(atPath: file), "the file is consumed")
        }
    }

    /// `allowsConcurrentExecution: false` in the product: a node's command
    /// refuses a second attempt while one is in flight (nothing is
    /// launched), and runs the next once it has ended.
    @Test func aSecondAttemptWhileOneRunsIsRefused() throws {
        let launcher = try launcher("  a: { run: sleep 100 }\n")
        let command = launcher.command(for: 0)
        let (first, _) = try start(launcher, "a", number: 1)
        #expect(command.isExecuting.value)
        let (second, _) = try start(launcher, "a", number: 2)
        #expect(processes.launched.count == 1)
        #expect(second.errors.first as? CommandError == .disabled)
        #expect(NodeError(try #require(second.errors.first)) == NodeError(.spawn, "an attempt of the node is still running"))
        processes.launched[0].exit(.exited(1))
        #expect(first.trace == ["error exit: exited with code 1"])
        #expect(!command.isExecuting.value)
        let (third, _) = try start(launcher, "a", number: 3)
        #expect(processes.launched.count == 2)
        processes.launched[1].exit(.exited(0))
        #expect(third.trace == ["exited 0", "completed"])
        #expect(launcher.command(for: 0) === command, "one command for all the node's attempts")
    }

    /// The launcher holds the run's commands: releasing it cancels what
    /// still runs (SIGTERM, then SIGKILL after the grace period).
    @Test func releasingTheLauncherTerminatesWhatStillRuns() throws {
        var launcher: CommandLauncher? = try launcher("  a: { run: sleep 100 }\n  b: { run: sleep 100 }\n")
        weak let released = launcher
        let (running, _) = try start(launcher!, "a")
        let (done, _) = try start(launcher!, "b")
        processes.launched[1].exit(.exited(0))
        launcher = nil
        #expect(released == nil)
        #expect(processes.launched[0].terminations == [grace])
        #expect(processes.launched[1].terminations.isEmpty, "an attempt that ended is not signalled")
        #expect(running.errors.first as? CommandError == .released)
        #expect(done.trace == ["exited 0", "completed"])
    }
}

/// The runner over the real `CommandLauncher` on fake processes.
@Suite struct CommandLauncherRunnerTests {
    /// A node's command lives as long as the node's part of the run: its
    /// attempts, a retry too, are executions of it; it goes once the node
    /// has ended and its processes are gone.
    @Test func aNodesCommandLastsFromItsFirstAttemptToItsEnd() throws {
        let scheduler = TestScheduler()
        let processes = FakeProcesses()
        let graph = try slurmTestGraph("""
            version: 1
            nodes:
              flaky: { run: sleep 100, retry: { times: 1, delay: 1s } }

            """, path: "/tmp/moon-node-command-test/moon.yaml")
        let plan = try Plan.make(graph: graph)
        let launcher = CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler,
                                       grace: .seconds(5), environment: ["PATH": "/usr/bin:/bin"])
        let runner = Runner(plan: RunPlan(graph: graph, plan: plan, cpus: 2), options: RunOptions(), launcher: launcher,
                            scheduler: scheduler) { _ in }
        #expect(launcher.commands.isEmpty, "made at the first attempt")
        runner.start()
        scheduler.advance()
        weak let command = launcher.commands[0]
        #expect(command?.isExecuting.value == true)
        processes.launched[0].exit(.exited(1))
        #expect(command?.isExecuting.value == false, "between two attempts")
        scheduler.advance(by: .seconds(1))
        #expect(processes.launched.count == 2)
        #expect(launcher.commands[0] === command, "the retry is an execution of the same command")
        processes.launched[1].exit(.exited(0))
        scheduler.advance()
        #expect(command == nil, "released once the node ended")
        withExtendedLifetime(runner) {}
    }

    /// Dropping the runner drops its launcher, whose commands cancel the
    /// attempts still running, a node that retries as well (its attempt's
    /// callbacks do not keep the launcher).
    @Test func droppingTheRunnerTerminatesTheNodesStillRunning() throws {
        let scheduler = TestScheduler()
        let processes = FakeProcesses()
        let graph = try slurmTestGraph("""
            version: 1
            nodes:
              plain: { run: sleep 100 }
              retries: { run: sleep 100, retry: { times: 2 }, timeout: 50s }

            """, path: "/tmp/moon-node-command-test/moon.yaml")
        let plan = try Plan.make(graph: graph)
        var launcher: CommandLauncher? = CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler,
                                                         grace: .seconds(5), environment: ["PATH": "/usr/bin:/bin"])
        weak let releasedLauncher = launcher
        var runner: Runner? = Runner(plan: RunPlan(graph: graph, plan: plan, cpus: 2), options: RunOptions(), launcher: launcher!,
                                     scheduler: scheduler) { _ in }
        launcher = nil
        runner?.start()
        scheduler.advance(by: .seconds(1))
        #expect(processes.launched.count == 2)
        #expect(processes.launched.allSatisfy { $0.terminations.isEmpty })
        runner = nil
        #expect(releasedLauncher == nil)
        #expect(processes.launched.allSatisfy { $0.terminations == [.seconds(5)] })
    }
}
