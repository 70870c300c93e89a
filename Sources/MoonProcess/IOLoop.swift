import CMoonSpawn
import Foundation
import Glibc
import HeapModule

/// The launcher's one thread (its own, or one that adopted the loop: `moon
/// run`'s main thread), and moon's event loop: a `poll(2)` loop over
/// every child's stdout and stderr pipes and its pidfd (readable when the
/// child exits), a self-pipe to pick up work from other threads, a timer
/// heap, and a queue of posted work.
///
/// Doing the reaping here, in the same thread as the reading, makes the
/// order simple: a process completes when its exit has been seen and both
/// pipes are closed, and all its callbacks run on this thread.
///
/// Posted work (`post`, `schedule`) runs on this thread too, so moon's
/// runner can live here, as ninja's does in its one loop: a child's exit,
/// the runner's decision and the next spawn then happen on one thread
/// without a single thread hand-off. Work posted from the loop's own
/// thread costs no system call at all. Each turn of the loop runs the due
/// timers and all posted work (also work posted meanwhile) before it polls
/// again, which bounds what can pile up: at most one read per pipe.
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
            /// Signal numbers, a byte each (`forwardSignals`).
            case signals((Int32) -> Void)
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
    /// Marks the loop's own thread (its value is the loop), for `isCurrent`.
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private let lock: Lock
    private let reap: (LaunchedProcess) -> Termination
    /// Told when a process has completed: its descriptors are free again.
    private let completed: (IOLoop) -> Void
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // Guarded by `lock`.
    private var incoming: [Watch] = []
    private var incomingWork: [() -> Void] = []
    private var wakeScheduled = false

    // Owned by the loop's thread.
    private var watches: [Watch] = []
    private var draining: [LaunchedProcess] = []
    private var work: [() -> Void] = []
    /// The batch being run; swapped with `work` so neither is reallocated.
    private var running: [() -> Void] = []
    private var timers = TimerHeap()
    /// Whether `watches` changed since the poll set was built.
    private var dirty = true
    private var pollFds: [pollfd] = []
    /// Whether `pollOnce` is running (it is not re-entrant).
    private var polling = false
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: IOLoop.readSize, alignment: 16)

    /// Throws the errno of `pipe2` if it cannot make its wake pipe.
    init(lock: Lock, reap: @escaping (LaunchedProcess) -> Termination, completed: @escaping (IOLoop) -> Void = { _ in }) throws {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else { throw POSIXError.current }
        self.lock = lock
        self.reap = reap
        self.completed = completed
        wakeRead = fds[0]
        wakeWrite = fds[1]
        watches = [Watch(fd: wakeRead, kind: .wake)]
    }

    deinit {
        buffer.deallocate()
    }

    func start() {
        if BackgroundThread.start(name: "moon.loop", { [self] in run() }) { return }
        // No POSIX thread now: Foundation's may still come (it reports its
        // own failure).
        let thread = Thread { [self] in run() }
        thread.name = "moon.loop"
        thread.start()
    }

    /// Calls `handler` on the loop's thread with each of `signals` moon
    /// receives, instead of their default action: a signal handler writes
    /// the number to a pipe the loop watches (`moon_forward_signals`), so
    /// no thread waits for signals (a Dispatch signal source started one).
    /// Throws the errno of `pipe2` or `sigaction`.
    func forwardSignals(_ signals: [Int32], to handler: @escaping (Int32) -> Void) throws {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else { throw POSIXError.current }
        add([Watch(fd: fds[0], kind: .signals(handler))])
        let code = signals.withUnsafeBufferPointer { moon_forward_signals(fds[1], $0.baseAddress, Int32($0.count)) }
        if code != 0 { throw POSIXErrorCode(rawValue: code).map { POSIXError($0) } ?? POSIXError(.EINVAL) }
    }

    /// Whether the caller runs on the loop's thread.
    var isCurrent: Bool {
        pthread_getspecific(IOLoop.threadKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Hands watches to the loop (from any thread).
    func add(_ newWatches: [Watch]) {
        if isCurrent {
            watches += newWatches
            dirty = true
            return
        }
        let mustWake: Bool = lock.withLock {
            incoming += newWatches
            return scheduleWake()
        }
        if mustWake { wake() }
    }

    /// Runs `action` on the loop's thread, after what is already posted
    /// (from any thread; from the loop itself without a system call).
    func post(_ action: @escaping () -> Void) {
        if isCurrent {
            work.append(action)
            return
        }
        let mustWake: Bool = lock.withLock {
            incomingWork.append(action)
            return scheduleWake()
        }
        if mustWake { wake() }
    }

    /// Runs `action` on the loop's thread at the `CLOCK_MONOTONIC` time
    /// `deadline` (nanoseconds) or soon after.
    func post(atMonotonic deadline: UInt64, _ action: @escaping () -> Void) {
        if isCurrent {
            timers.push(deadline, action)
        } else {
            post { [self] in timers.push(deadline, action) }
        }
    }

    /// Call with `lock` held: whether the caller must write the wake byte.
    private func scheduleWake() -> Bool {
        if wakeScheduled { return false }
        wakeScheduled = true
        return true
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Makes the calling thread the loop's, instead of a thread of its own
    /// (`start`): it then runs the loop with `run(until:)`.
    func adoptCurrentThread() {
        pthread_setspecific(IOLoop.threadKey, Unmanaged.passUnretained(self).toOpaque())
    }

    private func run() {
        adoptCurrentThread()
        run(until: { false })
    }

    /// Runs turns of the loop on its thread until `finished()` is true
    /// (checked after the work of a turn and after its poll, so the loop
    /// never blocks in `poll` once its owner is done).
    func run(until finished: () -> Bool) {
        while !finished() {
            runTimersAndWork()
            if finished() { return }
            let timeout: Int32 = work.isEmpty ? pollTimeout() : 0
            _ = pollOnce(timeout: timeout)
        }
    }

    /// Runs the due timers, then posted work until none is left (work that
    /// posts more work is run in the same turn).
    private func runTimersAndWork() {
        let now = LinuxCalls.monotonicNanoseconds()
        while let action = timers.popDue(now: now) { action() }
        while !work.isEmpty {
            swap(&work, &running)
            for action in running { action() }
            running.removeAll(keepingCapacity: true)
        }
    }

    /// Polls once for I/O, for at most `timeout` milliseconds (-1: no
    /// limit), and handles what is ready: output, exits, drains and the wake
    /// pipe. Returns false, doing nothing, when called from inside itself.
    @discardableResult
    func pollOnce(timeout: Int32) -> Bool {
        guard !polling else { return false }
        polling = true
        defer { polling = false }
        if dirty {
            pollFds = watches.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            dirty = false
        }
        let ready = poll(&pollFds, nfds_t(pollFds.count), timeout)
        if ready < 0 {
            return true  // EINTR; poll has no other transient failure here
        }
        var removed = false
        let current = watches
        if ready > 0 {
            for index in pollFds.indices where pollFds[index].revents != 0 {
                let events = pollFds[index].revents
                pollFds[index].revents = 0
                let watch = current[index]
                if watch.isDone { continue }
                switch watch.kind {
                case .wake:
                    takeIncoming()
                case .pipe(let pipe):
                    if !readPipe(pipe, events: events) {
                        watch.isDone = true
                        removed = true
                    }
                case .exit(let process):
                    watch.isDone = true
                    removed = true
                    close(watch.fd)
                    exited(process)
                case .signals(let handler):
                    var numbers = [UInt8](repeating: 0, count: 16)
                    while case let count = read(watch.fd, &numbers, numbers.count), count > 0 {
                        for number in numbers[0..<count] { handler(Int32(number)) }
                    }
                }
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
        return true
    }

    /// The poll timeout in milliseconds for the next drain deadline or
    /// timer (-1: none), capped at `limit` milliseconds when given.
    func pollTimeout(limit: UInt64? = nil) -> Int32 {
        var deadline = draining.map(drainDeadline).min()
        if let next = timers.nextDeadline { deadline = min(deadline ?? next, next) }
        let now = LinuxCalls.monotonicNanoseconds()
        if let limit { deadline = min(deadline ?? now &+ limit, now &+ limit) }
        guard let deadline else { return -1 }
        if deadline <= now { return 0 }
        // Round up so we never wake just before the deadline and spin.
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    private func takeIncoming() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &sink, sink.count) > 0 {}
        let (newWatches, newWork): ([Watch], [() -> Void]) = lock.withLock {
            wakeScheduled = false
            defer {
                incoming.removeAll()
                incomingWork.removeAll()
            }
            return (incoming, incomingWork)
        }
        if !newWatches.isEmpty {
            watches += newWatches
            dirty = true
        }
        work += newWork
    }

    /// Reads what `pipe` holds, once; returns false when the pipe is
    /// finished (EOF or error). Called only when poll reported it readable
    /// or hung up (`events`), so the read returns at once although the
    /// descriptor is blocking (see `ProcessLauncher.launchOnce`).
    ///
    /// A pipe reports POLLIN while it holds data and POLLHUP once no writer
    /// is left: POLLHUP alone is the end (no read, which would only return
    /// 0), and a read that empties a hung-up pipe (less than the buffer
    /// came) is its end too (no poll and read more). That is one system
    /// call less per pipe and node, two when the node wrote something.
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
        // Break the cycles (process → pipe → process; process → callbacks →
        // the caller's handle → process): a finished node's process, its
        // callbacks and all they captured would otherwise live until moon
        // exits, about 4 KB per node.
        process.pipes = []
        process.onOutput = { _ in }
        process.onExit = { _ in }
        completed(self)
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
}

/// The loop's timers, earliest deadline first, first come first served
/// among equal deadlines.
struct TimerHeap {
    private struct Entry: Comparable {
        let deadline: UInt64
        let order: UInt64
        let action: () -> Void

        static func < (a: Entry, b: Entry) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order
        }

        static func == (a: Entry, b: Entry) -> Bool {
            a.deadline == b.deadline && a.order == b.order
        }
    }

    private var heap = Heap<Entry>()
    private var counter: UInt64 = 0

    var nextDeadline: UInt64? { heap.min?.deadline }

    mutating func push(_ deadline: UInt64, _ action: @escaping () -> Void) {
        counter &+= 1
        heap.insert(Entry(deadline: deadline, order: counter, action: action))
    }

    /// Removes and returns the earliest action due at `now`, if any.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        guard let first = heap.min, first.deadline <= now else { return nil }
        return heap.removeMin().action
    }
}

extension POSIXError {
    /// The error `errno` names now.
    static var current: POSIXError {
        POSIXErrorCode(rawValue: errno).map { POSIXError($0) } ?? POSIXError(.EIO)
    }
}
