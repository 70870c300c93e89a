import Dispatch
import MoonCommand
import MoonGraph
import MoonProcess

/// One graph node compiled into a Command of the reactive core: `run` starts
/// the node's process (shell or exec form) or its built-in and sends its
/// output with `next`, then `complete` or `error` (a `NodeError`). The
/// runner executes it once per attempt, with callbacks on its own queue.
final class NodeCommand: Command<NodeCommand.Input, NodeOutput> {
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

    init(node: Node, environment: NodeEnvironment, processes: ProcessLaunching, scheduler: DateScheduler,
         executeQueue: DispatchQueue) {
        self.node = node
        self.environment = environment
        self.processes = processes
        self.scheduler = scheduler
        super.init(name: node.name, executeQueue: executeQueue, allowsConcurrentExecution: false)
    }

    override func run(_ input: Input, result: CommandResult<NodeOutput>) -> Cancelable? {
        switch node.action {
        case .builtin(let name, let arguments):
            let context = Builtin.Context(scheduler: scheduler, directory: environment.graphDirectory, inputs: input.inputs)
            let sink = Builtin.Result(
                next: { result.next(.value($0)) },
                complete: { result.complete() },
                fail: { result.error(NodeError(.builtin, $0)) })
            let work = Builtin.run(name, with: arguments, context: context, result: sink)
            input.control.attach(builtin: work)
            return work
        case .shell, .exec:
            guard let spec = environment.processSpec(for: node, attempt: input.attempt) else {
                result.error(NodeError(.spawn, "node '\(node.name)' has an empty command"))
                return nil
            }
            do {
                let handle = try processes.launch(spec, onOutput: { line in
                    let stream: OutputStream = line.stream == .stdout ? .stdout : .stderr
                    result.next(.line(stream, line.text, continued: line.continued))
                }, onExit: { termination in
                    switch termination {
                    case .exited(0):
                        result.next(.exited(code: 0))
                        result.complete()
                    case .exited(let code):
                        result.error(NodeError(.exit, "exited with code \(code)", exitCode: code))
                    case .signaled(let signal):
                        result.error(NodeError(.signal, "killed by \(Termination.signalName(signal))", signal: signal))
                    }
                })
                input.control.attach(process: handle)
                // Disposed when the command is released or the execution is
                // torn down: nothing of the node may outlive it.
                return ActionDisposable { handle.kill() }
            } catch {
                result.error(NodeError(.spawn, "\(error)"))
                return nil
            }
        }
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
    private var pending: Bool?
    /// Ends a cancelled built-in attempt (built-ins stop at once).
    var onBuiltinCanceled: (() -> Void)?

    init(grace: Duration) {
        self.grace = grace
    }

    func attach(process handle: ProcessHandle) {
        let cancel: Bool? = lock.withLock {
            process = handle
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

    func cancel(immediately: Bool) {
        let (process, builtin): (ProcessHandle?, Disposable?) = lock.withLock {
            pending = immediately || (pending ?? false)
            return (self.process, self.builtin)
        }
        if let process { stop(process, immediately: immediately) }
        if let builtin { cancelBuiltin(builtin) }
    }

    private func stop(_ handle: ProcessHandle, immediately: Bool) {
        if immediately { handle.kill() } else { handle.terminate(grace: grace) }
    }

    private func cancelBuiltin(_ work: Disposable) {
        guard !work.isDisposed else { return }
        work.dispose()
        onBuiltinCanceled?()
    }
}
