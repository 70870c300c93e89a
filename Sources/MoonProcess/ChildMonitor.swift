import Glibc
import MoonEventLoop
import MoonSystem

/// Watches the launcher's children on the event loop: reads each child's
/// stdout and stderr pipes into lines, reaps it when its pidfd becomes
/// readable, and completes it (`onExit`) once its exit has been seen and
/// both pipes are closed. Everything here runs on the loop's thread, so a
/// child's callbacks are serial and in order.
///
/// Drain window: when the main process exits, its group is SIGKILLed, so
/// the pipes normally reach EOF at once. A process outside the group (one
/// that called `setsid`) may still hold them; then the pipes are closed and
/// the child completes once no data has arrived for `drainIdle` after the
/// exit, or at the latest `drainLimit` after it.
final class ChildMonitor {
    /// One of a child's output pipes (its read end).
    final class Pipe {
        let fd: Int32
        let stream: OutputLine.Stream
        let process: LaunchedProcess
        var splitter = LineSplitter()
        var isOpen = true
        var watch: EventLoop.Watch?

        init(fd: Int32, stream: OutputLine.Stream, process: LaunchedProcess) {
            self.fd = fd
            self.stream = stream
            self.process = process
        }
    }

    static let drainIdle: UInt64 = 150_000_000
    static let drainLimit: UInt64 = 2_000_000_000
    private static let readSize = 64 * 1024

    let loop: EventLoop
    /// Reaps the child whose pidfd became readable (see `ProcessLauncher.reap`).
    private let reap: (LaunchedProcess) -> Termination
    /// Told when a child has completed: its descriptors are free again.
    private let completed: () -> Void
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ChildMonitor.readSize, alignment: 16)

    init(loop: EventLoop, reap: @escaping (LaunchedProcess) -> Termination, completed: @escaping () -> Void) {
        self.loop = loop
        self.reap = reap
        self.completed = completed
    }

    deinit {
        buffer.deallocate()
    }

    /// Starts watching `process` (from any thread): its output pipes'
    /// read ends and its pidfd, which the monitor closes when done.
    func watch(_ process: LaunchedProcess, stdout: Int32, stderr: Int32, pidfd: Int32) {
        let pipes = [
            Pipe(fd: stdout, stream: .stdout, process: process),
            Pipe(fd: stderr, stream: .stderr, process: process),
        ]
        process.pipes = pipes
        process.openPipes = pipes.count
        var watches: [EventLoop.Watch] = pipes.map { pipe in
            let watch = EventLoop.Watch(fd: pipe.fd) { [unowned self] events in readPipe(pipe, events: events) }
            pipe.watch = watch
            return watch
        }
        watches.append(EventLoop.Watch(fd: pidfd) { [unowned self] _ in
            close(pidfd)
            exited(process)
            return false
        })
        loop.add(watches)
    }

    /// Reads what `pipe` holds, once; returns false when the pipe is
    /// finished (EOF or error). Called only when poll reported it readable
    /// or hung up (`events`), so the read returns at once although the
    /// descriptor is blocking (see `ProcessLauncher.makeOutputPipes`).
    ///
    /// A pipe reports POLLIN while it holds data and POLLHUP once no writer
    /// is left: POLLHUP alone is the end (no read, which would only return
    /// 0), and a read that empties a hung-up pipe (less than the buffer
    /// came) is its end too (no poll and read more).
    private func readPipe(_ pipe: Pipe, events: Int16) -> Bool {
        guard pipe.isOpen else { return false }
        let hungUp = events & Int16(POLLHUP) != 0
        if hungUp && events & Int16(POLLIN) == 0 {
            closePipe(pipe)
            return false
        }
        let count = read(pipe.fd, buffer.baseAddress, buffer.count)
        if count > 0 {
            let process = pipe.process
            process.lastDataTime = LinuxCalls.monotonicNanoseconds()
            let stream = pipe.stream
            pipe.splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { bytes, continued in
                process.onOutput(OutputLine(stream: stream, bytes: bytes, continued: continued))
            }
            // A line still being written (progress dots, a `\r` progress
            // bar): its end so far, for the live view and stall detection.
            if let tail = pipe.splitter.pendingTail(limit: OutputLine.partialLimit) {
                process.onOutput(OutputLine(stream: stream, bytes: tail, partial: true))
            }
            if hungUp && count < buffer.count {
                closePipe(pipe)
                return false
            }
            return true
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) {
            return true
        }
        closePipe(pipe)
        return false
    }

    private func closePipe(_ pipe: Pipe) {
        guard pipe.isOpen else { return }
        pipe.isOpen = false
        if let watch = pipe.watch { loop.cancel(watch) }
        pipe.watch = nil
        let process = pipe.process
        let stream = pipe.stream
        pipe.splitter.finish { bytes, continued in
            process.onOutput(OutputLine(stream: stream, bytes: bytes, continued: continued))
        }
        close(pipe.fd)
        process.openPipes -= 1
        completeIfDone(process)
    }

    private func exited(_ process: LaunchedProcess) {
        process.termination = reap(process)
        process.exitTime = LinuxCalls.monotonicNanoseconds()
        if process.openPipes > 0 {
            expireDrain(of: process)
        }
        completeIfDone(process)
    }

    /// When the drain window of an exited `process` is over.
    private func drainDeadline(_ process: LaunchedProcess) -> UInt64 {
        let idle = max(process.exitTime, process.lastDataTime) + ChildMonitor.drainIdle
        return min(idle, process.exitTime + ChildMonitor.drainLimit)
    }

    /// Closes the pipes of `process` at the end of its drain window (a
    /// timer, set again while data keeps arriving).
    private func expireDrain(of process: LaunchedProcess) {
        loop.post(atMonotonic: drainDeadline(process)) { [self] in
            guard !process.isCompleted else { return }
            guard LinuxCalls.monotonicNanoseconds() >= drainDeadline(process) else { return expireDrain(of: process) }
            for pipe in process.pipes where pipe.isOpen { closePipe(pipe) }
        }
    }

    private func completeIfDone(_ process: LaunchedProcess) {
        guard let termination = process.termination, process.openPipes == 0, !process.isCompleted else { return }
        process.isCompleted = true
        process.onExit(termination, process.measuredUsage)
        // Break the cycles (process → pipe → process; process → callbacks →
        // the caller's handle → process): a finished node's process, its
        // callbacks and all they captured would otherwise live until moon
        // exits.
        process.pipes = []
        process.onOutput = { _ in }
        process.onExit = { _, _ in }
        completed()
    }
}
