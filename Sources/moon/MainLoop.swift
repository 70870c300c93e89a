import Dispatch
import Foundation
import MoonEventLoop
import MoonProcess
import MoonRun

/// moon's event loop for one command (`run`, `replay`), on the main
/// thread: the thread has nothing else to do until the work ends, and the
/// work's end reaches it without a thread hand-off. The stop signals are
/// heard on the loop, like every other event.
final class MainLoop {
    /// The signals that stop a run or a replay cleanly instead of killing
    /// moon: Ctrl-C, `kill`, a closed terminal and Ctrl-\ (which the Swift
    /// runtime would answer with a crash report), and every other signal
    /// whose default is to end the process and that a user or a limit may
    /// send (a CPU limit's SIGXCPU, a stray SIGUSR1): the summary and the
    /// history are not lost to them.
    static let stopSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT,
                              SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT]

    let loop: EventLoop
    let scheduler: LoopScheduler
    /// nil when the loop already runs on a thread of its own.
    private let adopted: EventLoop?
    private let done = DispatchSemaphore(value: 0)
    /// Set on the loop by `finish()`.
    private(set) var isFinished = false

    /// Takes over moon's event loop; throws a `CLIError` (exit 1) when it
    /// cannot be started.
    init() throws {
        let processes = ProcessLauncher.shared
        do {
            adopted = try processes.adoptEventLoop()
            loop = try adopted ?? processes.eventLoop()
        } catch {
            throw CLIError("\(error)", exitCode: 1)
        }
        scheduler = LoopScheduler(loop: loop)
    }

    /// Calls `handler` on the loop with each of `signals` moon receives from
    /// now on, instead of their default action.
    func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        do {
            try loop.onSignals(signals, handler)
        } catch {
            throw CLIError("cannot take over SIGINT and SIGTERM (\(error))", exitCode: 1)
        }
    }

    /// Runs `start` on the loop, then the loop until `finish()`.
    func run(_ start: @escaping () -> Void) {
        scheduler.schedule(start)
        if let adopted {
            adopted.run(until: { self.isFinished })
        } else {
            done.wait()
        }
    }

    /// Ends `run`; called on the loop.
    func finish() {
        isFinished = true
        if adopted == nil { done.signal() }
    }
}
