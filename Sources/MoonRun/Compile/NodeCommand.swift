import Dispatch
import Foundation
import MoonCommand
import MoonGraph
import MoonProcess

/// One graph node compiled into a Command of the reactive core: `run` starts
/// the node's process (shell or exec form) or its built-in and sends its
/// output with `next`, then `complete` or `error` (a `NodeError`). The
/// runner executes it once per attempt, with callbacks on its own scheduler
/// (in moon, the event loop that also runs the command).
final class NodeCommand: Command<NodeCommand.Input, NodeOutput, any Error> {
    struct Input {
        let attempt: Int
        let inputs: NodeInputs
        /// Receives the attempt's process, so the runner can stop it gracefully.
        let control: AttemptControl
    }

    private let node: Node
    private let environment: NodeEnvironment
    private let processes: ProcessLaunching
    private let scheduler: DateScheduler
    /// Where each attempt's `$MOON_OUTPUT` file is made
    /// (`<directory>/<node>.<attempt>`); nil: no outputs. (The path is
    /// built once per attempt, as the command is made per attempt.)
    private let outputDirectory: String?

    /// Hears which `$MOON_OUTPUT` files were created (nil: look each one up).
    private let outputWatch: OutputWatch?

    /// Lines handed on but not yet reported; see `OutputCredit`.
    private let credit: OutputCredit?

    init(node: Node, environment: NodeEnvironment, processes: ProcessLaunching, scheduler: DateScheduler,
         executeOn executor: Scheduler, outputDirectory: String? = nil, outputWatch: OutputWatch? = nil,
         credit: OutputCredit? = nil) {
        self.node = node
        self.credit = credit
        self.outputWatch = outputWatch
        self.outputDirectory = outputDirectory
        self.environment = environment
        self.processes = processes
        self.scheduler = scheduler
        super.init(name: node.name, executeOn: executor, allowsConcurrentExecution: false)
    }

    override func run(_ input: Input, result: CommandResult<NodeOutput>) -> Cancelable? {
        switch node.action {
        case .builtin(let name, let written):
            let arguments: [String: BuiltinArgument]
            do {
                arguments = try resolve(written, of: name, inputs: input.inputs, attempt: input.attempt)
            } catch {
                result.error(NodeError(.builtin, "\(error)"))
                return nil
            }
            var context = Builtin.Context(scheduler: scheduler, directory: environment.graphDirectory, inputs: input.inputs)
            for (key, argument) in written { if case .template = argument { context.fromValues.insert(key) } }
            // A built-in's value is also its output `value` (the last one it sent).
            var last: String?
            let sink = Builtin.Result(
                next: { last = $0; result.next(.value($0)) },
                complete: {
                    if let last { result.next(.outputs([KeyValue("value", last)])) }
                    result.complete()
                },
                fail: { result.error(NodeError(.builtin, $0)) })
            let work = Builtin.run(name, with: arguments, context: context, result: sink)
            input.control.attach(builtin: work)
            return work
        case .shell, .exec:
            let outputFile = makeOutputFile(attempt: input.attempt)
            let spec: ProcessSpec
            // A node on a Slurm queue runs its process as an srun job step.
            let slurm = environment.graph.slurmOptions(for: node).map {
                SlurmStep(options: $0, graph: environment.graph.name, node: node.name,
                          queue: environment.graph.queues[node.queue].name)
            }
            do {
                guard let made = try environment.processSpec(for: node, attempt: input.attempt, inputs: input.inputs,
                                                             outputFile: outputFile) else {
                    result.error(NodeError(.spawn, "node '\(node.name)' has an empty command"))
                    return nil
                }
                spec = try slurm?.wrap(made) ?? made
            } catch let error as NodeError {
                outputFile.map(Self.remove)
                result.error(error)
                return nil
            } catch {
                outputFile.map(Self.remove)
                result.error(NodeError(.spawn, "\(error)"))
                return nil
            }
            do {
                let processes = self.processes
                // A Slurm job may write its file from another host, which an
                // inotify watch does not hear of: look its file up.
                let watch = slurm == nil ? outputWatch : nil
                let fileName = "\(node.name).\(input.attempt)"
                @Sendable func report(_ termination: Termination) {
                    // Outputs count only from a process that succeeded.
                    let succeeded = termination == .exited(0)
                    let outputs = outputFile.flatMap { path -> Result<[KeyValue], OutputFile.Problem>? in
                        if let watch, !watch.mayExist(fileName) { return succeeded ? .success([]) : nil }
                        return OutputFile.consume(path, parse: succeeded)
                    }
                    switch termination {
                    case .exited(0):
                        result.next(.exited(code: 0))
                        switch outputs {
                        case .failure(let problem)?:
                            result.error(NodeError(.exit, "exited with code 0, but its $MOON_OUTPUT is malformed: \(problem)", exitCode: 0))
                            return
                        case .success(let values)?:
                            if !values.isEmpty { result.next(.outputs(values)) }
                        case nil:
                            break
                        }
                        result.complete()
                    case .exited(let code):
                        result.error(NodeError(.exit, "exited with code \(code)", exitCode: code))
                    case .signaled(let signal):
                        result.error(NodeError(.signal, "killed by \(Termination.signalName(signal))", signal: signal))
                    }
                }
                let launch = { try processes.launch(spec, onOutput: { line in
                    let stream: OutputStream = line.stream == .stdout ? .stdout : .stderr
                    // Not a line: no output credit, never srun's job id.
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
                    self.credit?.take()
                    result.next(.line(stream, line.text, continued: line.continued))
                }, onExit: { srunTermination in
                    guard let slurm else { return report(srunTermination) }
                    let canceled = input.control.wasCanceled
                    slurm.cleanUp(after: srunTermination, canceled: canceled, environment: spec.environment, processes: processes) {
                        switch slurm.termination(for: srunTermination, canceled: canceled) {
                        case .success(let termination): report(termination)
                        case .failure(let error):
                            outputFile.map(Self.remove)
                            result.error(error)
                        }
                    }
                }) }
                do {
                    let handle = try launch()
                    input.control.attach(process: handle)
                    // Disposed when the command is released or the execution is
                    // torn down: nothing of the node may outlive it.
                    return ActionDisposable { handle.kill() }
                } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                    return waitAndLaunch(launch, error: error, input: input, result: result, outputFile: outputFile)
                }
            } catch {
                outputFile.map(Self.remove)
                result.error(NodeError(.spawn, "\(error)"))
                return nil
            }
        }
    }

    /// Out of descriptors or processes while other processes run: the
    /// launch waits, on moon's event loop, for one of them to end and tries
    /// again (`ProcessLaunching.waitForResources`), while events, timers and
    /// signals go on; it fails when waiting cannot help. The runner hears of
    /// the wait (`.waiting`): the node's timeout starts when it really starts.
    private func waitAndLaunch(_ launch: @escaping () throws -> ProcessHandle, error first: ProcessLaunchError, input: Input,
                               result: CommandResult<NodeOutput>, outputFile: String?) -> Cancelable? {
        let wait = WaitingLaunch()
        var lastError = first
        func fail(_ error: NodeError) {
            outputFile.map(Self.remove)
            result.error(error)
        }
        let queued = processes.waitForResources { giveUp in
            if wait.isOver { return true }
            if giveUp {
                wait.isOver = true
                fail(NodeError(.spawn, "\(lastError.withResourceHint())"))
                return true
            }
            do {
                let handle = try launch()
                wait.isOver = true
                wait.handle = handle
                result.next(.waiting(false))
                input.control.attach(process: handle)
                return true
            } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                lastError = error
                return false
            } catch {
                wait.isOver = true
                fail(NodeError(.spawn, "\(error)"))
                return true
            }
        }
        guard queued else {
            fail(NodeError(.spawn, "\(first.withResourceHint())"))
            return nil
        }
        result.next(.waiting(true))
        // Cancelled while waiting: it never starts (the attempt then ends
        // as cancelled, see `AttemptControl`).
        input.control.attach(waiting: ActionDisposable { wait.isOver = true })
        return ActionDisposable {
            wait.isOver = true
            wait.handle?.kill()
        }
    }

    /// A launch waiting for resources: over once started, failed or cancelled.
    private final class WaitingLaunch {
        var isOver = false
        var handle: ProcessHandle?
    }

    /// The `$MOON_OUTPUT` path of this attempt, or nil without a directory.
    /// The file is not created: a node that writes outputs creates it (`>>`
    /// does), and a missing file means no outputs. Most nodes write none, and
    /// creating and removing a file per node was a measurable part of moon's
    /// cost per process (inode work on the temp directory's filesystem).
    private func makeOutputFile(attempt: Int) -> String? {
        guard let outputDirectory else { return nil }
        return "\(outputDirectory)/\(node.name).\(attempt)"
    }

    private static func remove(_ path: String) {
        unlink(path)
    }

    /// `with:` values with `${{ … }}` resolved, then checked against the parameter's type.
    private func resolve(_ written: [String: BuiltinArgument], of name: String, inputs: NodeInputs, attempt: Int) throws -> [String: BuiltinArgument] {
        guard written.values.contains(where: { if case .template = $0 { return true } else { return false } }) else { return written }
        let interpolator = try environment.prepare(node, attempt: attempt, inputs: inputs, outputFile: nil).interpolator
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

/// The runner's hold on a running attempt: graceful cancellation goes to the
/// process (SIGTERM, grace, SIGKILL), and the command still reports how the
/// process ended, so the node's slot frees only when its processes are gone.
/// A cancel that arrives before the process exists is applied when it does.
final class AttemptControl: AttemptHandle {
    private let lock = Lock()
    private let grace: Duration
    private var process: ProcessHandle?
    private var builtin: Disposable?
    /// A launch waiting for descriptors (see `NodeCommand.waitAndLaunch`).
    private var waiting: Disposable?
    private var pending: Bool?
    /// Whether moon asked this attempt to stop (a Slurm job is then `scancel`ed).
    var wasCanceled: Bool { lock.withLock { pending != nil } }
    /// Ends a cancelled attempt that has no process: a built-in (built-ins
    /// stop at once), or a launch still waiting for descriptors.
    var onCanceledWithoutProcess: (() -> Void)?

    init(grace: Duration) {
        self.grace = grace
    }

    func attach(process handle: ProcessHandle) {
        let cancel: Bool? = lock.withLock {
            process = handle
            waiting = nil
            return pending
        }
        if let immediately = cancel { stop(handle, immediately: immediately) }
    }

    func attach(builtin work: Disposable) {
        let cancel: Bool? = lock.withLock {
            builtin = work
            return pending
        }
        if cancel != nil { cancelBuiltin(work) }
    }

    /// A launch that waits for descriptors; a cancel ends it (it never starts).
    func attach(waiting work: Disposable) {
        let cancel: Bool? = lock.withLock {
            waiting = work
            return pending
        }
        if cancel != nil { cancelBuiltin(work) }
    }

    func cancel(immediately: Bool) {
        let (process, builtin, waiting): (ProcessHandle?, Disposable?, Disposable?) = lock.withLock {
            pending = immediately || (pending ?? false)
            return (self.process, self.builtin, self.waiting)
        }
        if let process { stop(process, immediately: immediately) }
        if let builtin { cancelBuiltin(builtin) }
        if let waiting { cancelBuiltin(waiting) }
    }

    private func stop(_ handle: ProcessHandle, immediately: Bool) {
        if immediately { handle.kill() } else { handle.terminate(grace: grace) }
    }

    private func cancelBuiltin(_ work: Disposable) {
        guard !work.isDisposed else { return }
        work.dispose()
        onCanceledWithoutProcess?()
    }
}
