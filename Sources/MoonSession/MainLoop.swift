import Dispatch
import Foundation
import MoonCommand
import MoonEventLoop
import MoonProcess
import MoonRun

/// moon's event loop for one command (`run`, `replay`), on the main
/// thread: the thread has nothing else to do until the work ends, and the
/// work's end reaches it without a thread hand-off. The stop signals are
/// heard on the loop, like every other event.
package final class MainLoop {
    /// The signals that stop a run or a replay cleanly instead of killing
    /// moon: Ctrl-C, `kill`, a closed terminal and Ctrl-\ (which the Swift
    /// runtime would answer with a crash report), and every other signal
    /// whose default is to end the process and that a user or a limit may
    /// send (a CPU limit's SIGXCPU, a stray SIGUSR1): the summary and the
    /// history are not lost to them.
    package static let stopSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT,
                              SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT]

    package let loop: EventLoop
    package let loopScheduler: LoopScheduler
    package var scheduler: DateScheduler { loopScheduler }
    /// The launcher of the nodes' processes, on this loop.
    package let launcher: ProcessLauncher
    package var processes: any ProcessGroups { launcher }
    /// Set on the loop by `finish()`.
    package private(set) var isFinished = false

    /// Makes moon's event loop, run by the calling thread (`run`), and the
    /// process launcher on it; throws a `CLIError` (exit 1) when it cannot
    /// be started. The calling thread otherwise only waits for the work to
    /// end: the first node starts without waiting for a new thread to be
    /// scheduled, and the end reaches it without a wake-up.
    package init() throws {
        do {
            loop = try EventLoop()
        } catch let error as POSIXError {
            // As the launcher said when it made the loop.
            throw CLIError("cannot run 'moon': starting the launcher: \(String(cString: strerror(error.code.rawValue)))", exitCode: 1)
        } catch {
            throw CLIError("\(error)", exitCode: 1)
        }
        loop.adoptCurrentThread()
        launcher = ProcessLauncher(loop: loop)
        loopScheduler = LoopScheduler(loop: loop)
    }

    /// Calls `handler` on the loop with each of `signals` moon receives from
    /// now on, instead of their default action.
    package func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        do {
            try loop.onSignals(signals, handler)
        } catch {
            throw CLIError("cannot take over SIGINT and SIGTERM (\(error))", exitCode: 1)
        }
    }

    /// Runs `start` on the loop, then the loop until `finish()`.
    package func run(_ start: @escaping () -> Void) {
        loopScheduler.schedule(start)
        loop.run(until: { self.isFinished })
    }

    /// Ends `run`; called on the loop.
    package func finish() {
        isFinished = true
    }
}
