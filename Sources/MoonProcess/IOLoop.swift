import Foundation
import Glibc

/// The launcher's one I/O thread: a `poll(2)` loop over every child's stdout
/// and stderr pipes and its pidfd (readable when the child exits), plus a
/// self-pipe to pick up newly started children.
///
/// Doing the reaping here, in the same thread as the reading, makes the
/// order simple: a process completes when its exit has been seen and both
/// pipes are closed, and all its callbacks run on this thread. Nothing sleeps
/// or polls on a timer; the only timeout is the drain window below.
///
/// Drain window: when the main process exits, its group is SIGKILLed, so
/// the pipes normally reach EOF at once. A process outside the group (one
/// that called `setsid`) may still hold them; then the pipes are closed and
/// the process completes once no data has arrived for `drainIdle` after the
/// exit, or at the latest `drainLimit` after it.
final class IOLoop: @unchecked Sendable {
    final class Pipe {
        let fd: Int32
        let stream: OutputLine.Stream
        let process: LaunchedProcess
        var splitter = LineSplitter()
        var isOpen = true

        init(fd: Int32, stream: OutputLine.Stream, process: LaunchedProcess) {
            self.fd = fd
            self.stream = stream
            self.process = process
        }
    }

    final class Watch {
        enum Kind {
            case wake
            case pipe(Pipe)
            case exit(LaunchedProcess)
        }
        let fd: Int32
        let kind: Kind
        var isDone = false

        init(fd: Int32, kind: Kind) {
            self.fd = fd
            self.kind = kind
        }
    }

    static let drainIdle: UInt64 = 150_000_000
    static let drainLimit: UInt64 = 2_000_000_000
    private static let readSize = 64 * 1024

    private let lock: Lock
    private let reap: (LaunchedProcess) -> Termination
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // Guarded by `lock`.
    private var thread: pthread_t?
    private var incoming: [Watch] = []
    private var wakeScheduled = false

    // Owned by the I/O thread.
    private var watches: [Watch] = []
    private var draining: [LaunchedProcess] = []

    /// Throws the errno of `pipe2` if it cannot make its wake pipe.
    init(lock: Lock, reap: @escaping (LaunchedProcess) -> Termination) throws {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else { throw POSIXErrorCode(rawValue: errno).map { POSIXError($0) } ?? POSIXError(.EIO) }
        self.lock = lock
        self.reap = reap
        wakeRead = fds[0]
        wakeWrite = fds[1]
        watches = [Watch(fd: wakeRead, kind: .wake)]
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "moon.process-io"
        thread.start()
    }

    /// Hands watches to the I/O thread (from any thread).
    func add(_ newWatches: [Watch]) {
        let mustWake: Bool = lock.withLock {
            incoming += newWatches
            if wakeScheduled { return false }
            wakeScheduled = true
            return true
        }
        if mustWake {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// Whether the caller is the I/O thread. Call with `lock` held.
    var isCurrentThreadLocked: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    private func run() {
        lock.withLock { thread = pthread_self() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: IOLoop.readSize, alignment: 16)
        defer { buffer.deallocate() }
        var pollFds: [pollfd] = []
        var dirty = true
        while true {
            if dirty {
                pollFds = watches.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
                dirty = false
            }
            let ready = poll(&pollFds, nfds_t(pollFds.count), pollTimeout())
            if ready < 0 {
                continue  // EINTR; poll has no other transient failure here
            }
            var removed = false
            let current = watches
            for index in pollFds.indices where pollFds[index].revents != 0 {
                pollFds[index].revents = 0
                let watch = current[index]
                if watch.isDone { continue }
                switch watch.kind {
                case .wake:
                    takeIncoming()
                    dirty = true
                case .pipe(let pipe):
                    if !readPipe(pipe, buffer: buffer) {
                        watch.isDone = true
                        removed = true
                    }
                case .exit(let process):
                    watch.isDone = true
                    removed = true
                    close(watch.fd)
                    exited(process)
                }
            }
            if !draining.isEmpty && expireDrains() {
                removed = true
            }
            if removed {
                watches.removeAll { watch in
                    if watch.isDone { return true }
                    if case .pipe(let pipe) = watch.kind { return !pipe.isOpen }
                    return false
                }
                dirty = true
            }
        }
    }

    private func takeIncoming() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &sink, sink.count) > 0 {}
        let new: [Watch] = lock.withLock {
            wakeScheduled = false
            defer { incoming.removeAll() }
            return incoming
        }
        watches += new
    }

    /// Reads once; returns false when the pipe is finished (EOF or error).
    private func readPipe(_ pipe: Pipe, buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard pipe.isOpen else { return false }
        let count = read(pipe.fd, buffer.baseAddress, buffer.count)
        if count > 0 {
            let process = pipe.process
            process.lastDataTime = LinuxCalls.monotonicNanoseconds()
            let stream = pipe.stream
            pipe.splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { bytes, continued in
                process.onOutput(OutputLine(stream: stream, bytes: bytes, continued: continued))
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
            draining.append(process)
        }
        completeIfDone(process)
    }

    private func completeIfDone(_ process: LaunchedProcess) {
        guard let termination = process.termination, process.openPipes == 0, !process.isCompleted else { return }
        process.isCompleted = true
        draining.removeAll { $0 === process }
        process.onExit(termination)
    }

    private func drainDeadline(_ process: LaunchedProcess) -> UInt64 {
        let idle = max(process.exitTime, process.lastDataTime) + IOLoop.drainIdle
        return min(idle, process.exitTime + IOLoop.drainLimit)
    }

    /// Closes the pipes of processes whose drain window is over.
    private func expireDrains() -> Bool {
        let now = LinuxCalls.monotonicNanoseconds()
        var closed = false
        for process in draining where now >= drainDeadline(process) {
            for pipe in process.pipes where pipe.isOpen {
                closePipe(pipe)
                closed = true
            }
        }
        return closed
    }

    private func pollTimeout() -> Int32 {
        guard let deadline = draining.map(drainDeadline).min() else { return -1 }
        let now = LinuxCalls.monotonicNanoseconds()
        if deadline <= now { return 0 }
        // Round up so we never wake just before the deadline and spin.
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }
}
