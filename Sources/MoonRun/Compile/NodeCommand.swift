import Foundation
import MoonCommand
import MoonEvents
import MoonGraph
import MoonSystem
import MoonProcess

/// One graph node compiled into a Command of the reactive core, one per node
/// for the run (`CommandLauncher`); each execution is one attempt. Not
/// concurrent: an execution while another is in flight is refused
/// (`CommandError.disabled`), so a node never has two attempts at once;
/// releasing the command cancels the one in flight. `run` starts the node's process (shell or
/// exec form; an srun job step on a Slurm queue) or its built-in, sends
/// its output with `next`, then `complete` or `error` (a `NodeError`).
/// Disposing the execution cancels the attempt: a built-in stops at once,
/// a process group gets SIGTERM and SIGKILL after the grace period, and
/// `NodeProcesses` tells when it is gone.
///
/// It has a `Command` rather than being one: the Swift runtime makes the
/// metadata of a subclass of a generic class by resolving the superclass
/// from its mangled name, and checking `any Error: Error` there searched
/// every conformance record of the binary (and faulted in their pages)
/// at the first node's start.
// @unchecked: its stored properties are set once, in `init`.
final class NodeCommand: @unchecked Sendable {
    struct Input {
        let attempt: Int
        let inputs: NodeInputs
    }

    /// What the commands of all nodes share.
    struct Context {
        let environment: NodeEnvironment
        let processes: ProcessLaunching
        /// Where commands run and built-ins keep time: the runner's scheduler.
        let scheduler: DateScheduler
        /// SIGTERM to SIGKILL of a cancelled attempt.
        let grace: Duration
        let groups: NodeProcesses
        /// Where each attempt's `$MOON_OUTPUT` file goes (nil: no outputs).
        let outputs: OutputDirectory?
        /// What an interactive node's process takes of moon's terminal,
        /// asked at its spawn (nil: moon's stdin only).
        var terminal: (() -> TerminalUse)?
        /// What Slurm nodes learned and their tasks' reporter, read at the first Slurm start.
        let slurm: SlurmRunReading
    }

    private let node: Node
    /// The node's index in the plan.
    private let index: Int
    private let context: Context
    /// The node's command, whose work is `run`; released with this.
    private var command: Command<Input, NodeOutput, any Error>!

    init(node: Node, index: Int, context: Context) {
        self.node = node
        self.index = index
        self.context = context
        command = Command(name: node.name, executeOn: context.scheduler, allowsConcurrentExecution: false) { [weak self] input, result in
            guard let self else {
                result.error(CommandError.released)
                return nil
            }
            return self.run(input, result: result)
        }
    }

    /// An execution: one attempt of the node (`Command.signal`).
    func signal(_ input: Input) -> Signal<NodeOutput> {
        command.signal(input)
    }

    /// Whether an attempt is in flight (`Command.isExecuting`).
    var isExecuting: Property<Bool> { command.isExecuting }

    private func run(_ input: Input, result: CommandResult<NodeOutput>) -> Cancelable? {
        // A group has nothing to run: it succeeds once its needs let it start.
        if case .group = node.action {
            result.complete()
            return nil
        }
        if case .builtin(let name, let written) = node.action {
            return runBuiltin(name, written, input: input, result: result)
        }
        return runProcess(input, result: result)
    }

    // MARK: - Built-ins

    private func runBuiltin(_ name: String, _ written: [String: BuiltinArgument], input: Input,
                            result: CommandResult<NodeOutput>) -> Cancelable? {
        let arguments: [String: BuiltinArgument]
        do {
            arguments = try resolve(written, of: name, inputs: input.inputs, attempt: input.attempt)
        } catch {
            result.error(NodeError(.builtin, "\(error)"))
            return nil
        }
        var builtin = Builtin.Context(scheduler: context.scheduler, directory: context.environment.graphDirectory, inputs: input.inputs)
        for (key, argument) in written { if case .template = argument { builtin.fromValues.insert(key) } }
        // A built-in's value is also its output `value` (the last one it sent).
        var last: String?
        let sink = Builtin.Result(
            next: { last = $0; result.next(.value($0)) },
            complete: {
                if let last { result.next(.outputs([KeyValue("value", last)])) }
                result.complete()
            },
            fail: { result.error(NodeError(.builtin, $0)) })
        return Builtin.run(name, with: arguments, context: builtin, result: sink)
    }

    // MARK: - Processes

    private func runProcess(_ input: Input, result: CommandResult<NodeOutput>) -> Cancelable? {
        // The file is not created: a node that writes outputs creates it
        // (`>>` does), and a missing file means no outputs.
        // Named by the node's index: an instance's name may hold a `/` (`text[man/a.gz]`).
        let outputFile = context.outputs?.path.map { "\($0)/\(Self.outputFileName(index, input.attempt))" }
        // A node on a Slurm queue runs its process as an srun job step,
        // asking for what it declares, else for what it learned; its task
        // is measured beside its `$MOON_OUTPUT` file.
        let graph = context.environment.graph
        let slurm = graph.slurmOptions(for: node).map { declared in
            let run = context.slurm.read()
            return SlurmStep(options: run.learned.requesting(declared, node: node.name), graph: graph.name, node: node.name,
                             queue: graph.queues[node.queue].name, programs: context.environment.programs,
                             reporter: run.reporter, usageFile: outputFile.map { $0 + ".usage" })
        }
        let spec: ProcessSpec
        do {
            guard let made = try context.environment.processSpec(for: node, attempt: input.attempt, inputs: input.inputs,
                                                                 outputFile: outputFile) else {
                result.error(NodeError(.spawn, "node '\(node.name)' has an empty command"))
                return nil
            }
            var wrapped = try slurm?.wrap(made) ?? made
            // (srun's cgroup would measure srun, not the job on its host.)
            wrapped.memoryCgroup = slurm == nil && MemoryCgroupPolicy.current.applies(declaresMemory: node.resources.memory != nil)
            if node.isInteractive { wrapped.terminal = context.terminal?() ?? TerminalUse(output: false, foreground: nil) }
            spec = wrapped
        } catch {
            outputFile.map(Self.remove)
            result.error(error as? NodeError ?? NodeError(.spawn, "\(error)"))
            return nil
        }
        let launch = launcher(for: spec, slurm: slurm, outputFile: outputFile, attempt: input.attempt, result: result)
        let state = LaunchState()
        do {
            state.handle = try launch()
            return cancellation(of: state)
        } catch let error as ProcessLaunchError where error.kind == .outOfResources {
            return waitAndLaunch(launch, error: error, state: state, result: result, outputFile: outputFile)
        } catch {
            outputFile.map(Self.remove)
            result.error(NodeError(.spawn, "\(error)"))
            return nil
        }
    }

    /// An attempt's process: launched at once, or after waiting for resources.
    private final class LaunchState {
        var handle: ProcessHandle?
        var isCanceled = false
    }

    /// What disposing the execution does: a launch still waiting never
    /// happens; a process group gets SIGTERM, then SIGKILL after the grace
    /// period (nothing, once it is reaped).
    private func cancellation(of state: LaunchState) -> Cancelable {
        let grace = context.grace
        return ActionDisposable {
            state.isCanceled = true
            state.handle?.terminate(grace: grace)
        }
    }

    /// Launches `spec` when called: its lines become `next`s, its end the
    /// attempt's last events. `NodeProcesses` counts it from before its
    /// launch until it is reaped (for a Slurm step: until its job is
    /// cancelled too).
    private func launcher(for spec: ProcessSpec, slurm: SlurmStep?, outputFile: String?, attempt: Int,
                          result: CommandResult<NodeOutput>) -> () throws -> ProcessHandle {
        let (processes, groups, index) = (context.processes, context.groups, index)
        let report = Self.exitReport(outputFile: outputFile, successCodes: node.successCodes, result: result)
        return {
            groups.launching(index)
            do {
                let handle = try processes.launch(spec, onOutput: { line in
                    Self.forward(line, slurm: slurm, to: result)
                }, onExitWithUsage: { srunTermination, usage in
                    guard let slurm else {
                        groups.ended(index, usage: usage, source: usage?.cgroupPeakBytes == nil ? .rusage : .cgroup)
                        return report(srunTermination, usage?.memoryKills)
                    }
                    // srun's own usage is not the task's, which ran on another host: the reporter's file has that.
                    // Cancelled: the runner or the node's timeout disposed the execution.
                    let canceled = !result.isActive
                    slurm.cleanUp(after: srunTermination, canceled: canceled, environment: spec.environment, processes: processes) {
                        groups.ended(index, usage: slurm.takeUsage(), source: .slurm)
                        switch slurm.termination(for: srunTermination, canceled: canceled) {
                        case .success(let termination): report(termination, nil)
                        case .failure(let error):
                            outputFile.map(Self.remove)
                            result.error(error)
                        }
                    }
                })
                groups.launched(index, handle)
                return handle
            } catch {
                groups.ended(index)
                throw error
            }
        }
    }

    /// One line (or the end of one still being written) of the process.
    private static func forward(_ line: OutputLine, slurm: SlurmStep?, to result: CommandResult<NodeOutput>) {
        let stream: MoonEvents.OutputStream = line.stream == .stdout ? .stdout : .stderr
        // Not a line: never srun's job id.
        if line.partial { return result.next(.partial(stream, line.text)) }
        if let slurm, stream == .stderr, !line.continued {
            switch slurm.read(line.text) {
            case .keep: break
            case .drop: return
            case .job(let id, let keep):
                result.next(.job(id))
                if !keep { return }
            }
        }
        result.next(.line(stream, line.text, continued: line.continued))
    }

    /// The `$MOON_OUTPUT` file of an attempt, in the run's output directory.
    static func outputFileName(_ index: Int, _ attempt: Int) -> String { "node-\(index).\(attempt)" }

    /// How the process ended, as the attempt's last events: `exited` and
    /// its outputs, then `complete`; or an error.
    /// `successCodes`: the node's `success-codes` (an exit code among them
    /// succeeds, and is reported on `complete`).
    private static func exitReport(outputFile: String?, successCodes: [Int32],
                                   result: CommandResult<NodeOutput>) -> @Sendable (Termination, Int?) -> Void {
        return { termination, memoryKills in
            var exited: Int32?
            if case .exited(let code) = termination { exited = code }
            // Outputs count only from a process that succeeded.
            let succeeded = exited.map(successCodes.contains) ?? false
            let outputs = outputFile.flatMap { OutputFile.consume($0, parse: succeeded) }
            switch termination {
            case .exited(let code) where succeeded:
                result.next(.exited(code: code))
                switch outputs {
                case .failure(let problem)?:
                    result.error(NodeError(.exit, "exited with code \(code), but its $MOON_OUTPUT is malformed: \(problem)", exitCode: code))
                    return
                case .success(let values)?:
                    if !values.isEmpty { result.next(.outputs(values)) }
                case nil:
                    break
                }
                result.complete()
            case .exited(0):
                result.error(NodeError(.exit, "exited with code 0, which its success-codes leave out", exitCode: 0))
            case .exited(let code):
                result.error(NodeError(.exit, "exited with code \(code)", exitCode: code))
            case .signaled(let signal):
                var error = NodeError(.signal, "killed by \(signalName(signal))", signal: signal)
                error.memoryKills = memoryKills
                result.error(error)
            }
        }
    }

    /// Out of descriptors or processes while other processes run: the
    /// launch waits, on moon's event loop, for one of them to end and tries
    /// again (`ProcessLaunching.waitForResources`), while events, timers and
    /// signals go on; it fails when waiting cannot help. The attempt reports
    /// the wait (`.waiting`): the node's timeout counts from its real start.
    private func waitAndLaunch(_ launch: @escaping () throws -> ProcessHandle, error first: ProcessLaunchError,
                               state: LaunchState, result: CommandResult<NodeOutput>, outputFile: String?) -> Cancelable? {
        var lastError = first
        func fail(_ error: NodeError) {
            outputFile.map(Self.remove)
            result.error(error)
        }
        let queued = context.processes.waitForResources { giveUp in
            if state.isCanceled { return true }
            if giveUp {
                fail(NodeError(.spawn, "\(lastError.withResourceHint())"))
                return true
            }
            do {
                state.handle = try launch()
                result.next(.waiting(false))
                return true
            } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                lastError = error
                return false
            } catch {
                fail(NodeError(.spawn, "\(error)"))
                return true
            }
        }
        guard queued else {
            fail(NodeError(.spawn, "\(first.withResourceHint())"))
            return nil
        }
        result.next(.waiting(true))
        return cancellation(of: state)
    }

    private static func remove(_ path: String) {
        unlink(path)
    }

    /// `with:` values with `${{ … }}` resolved, then checked against the parameter's type.
    private func resolve(_ written: [String: BuiltinArgument], of name: String, inputs: NodeInputs, attempt: Int) throws -> [String: BuiltinArgument] {
        guard written.values.contains(where: { if case .template = $0 { return true } else { return false } }) else { return written }
        let interpolator = try context.environment.prepare(node, attempt: attempt, inputs: inputs, outputFile: nil).interpolator
        var arguments = written
        for (key, argument) in written {
            guard case .template(let text) = argument else { continue }
            let value = try interpolator.string(text)
            guard let parameter = BuiltinCatalog.builtin(named: name)?.parameter(key) else { continue }
            if parameter.kind == .string {
                arguments[key] = .string(value)
                continue
            }
            switch BuiltinCatalog.argument(value, for: parameter) {
            case .success(let typed) where !isTemplate(typed): arguments[key] = typed
            default:
                throw Interpolator.Failure(message: "invalid \(key) '\(value)' for built-in '\(name)' (from \(text)); it must be \(parameter.kind.expectation)")
            }
        }
        return arguments
    }

    private func isTemplate(_ argument: BuiltinArgument) -> Bool {
        if case .template = argument { return true }
        return false
    }
}
