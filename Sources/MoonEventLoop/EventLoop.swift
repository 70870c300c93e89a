import Foundation
import Glibc
import MoonSystem
import Synchronization

/// moon's event loop: one thread (its own, or one that adopted the loop:
/// `moon run`'s main thread) running a `poll(2)` loop over watched
/// descriptors (every child's pipes and pidfd, forwarded signals), a
/// self-pipe to pick up work from other threads, a timer heap, and a queue
/// of posted work.
///
/// Code that reacts to processes (moon's runner, the launcher's reaping)
/// runs here, as ninja's does in its one loop: a child's exit, the runner's
/// decision and the next spawn then happen on one thread without a thread
/// hand-off. Work posted from the loop's own thread costs no system call.
/// Each turn runs the due timers and all posted work (also work posted
/// meanwhile) before it polls again, which bounds what can pile up.
///
/// Work must not block: while it runs, no descriptor is served and no
/// timer fires.
public final class EventLoop: @unchecked Sendable {
    /// A descriptor the loop polls for input (`POLLIN`; hang-ups and errors
    /// are reported too). `handler` runs on the loop with the events seen
    /// and returns false once it is done with the descriptor (the loop then
    /// forgets it; closing it is the handler's business).
    public final class Watch {
        public let fd: Int32
        let handler: (_ events: Int16) -> Bool
        var isDone = false

        public init(fd: Int32, _ handler: @escaping (_ events: Int16) -> Bool) {
            self.fd = fd
            self.handler = handler
        }
    }

    /// Marks the loop's own thread (its value is the loop), for `isCurrent`.
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private let lock = Mutex(())
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // Guarded by `lock`.
    private var incoming: [Watch] = []
    private var incomingWork: [() -> Void] = []
    private var wakeScheduled = false

    // Owned by the loop's thread.
    private var watches: [Watch] = []
    private var work: [() -> Void] = []
    /// The batch being run; swapped with `work` so neither is reallocated.
    private var running: [() -> Void] = []
    private var timers = TimerHeap()
    /// Whether `watches` changed since the poll set was built.
    private var dirty = true
    private var pollFds: [pollfd] = []

    /// Throws a `POSIXError` (the errno of `pipe2`) if it cannot make its
    /// wake pipe.
    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else { throw POSIXError.current }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        watches = [Watch(fd: wakeRead) { [unowned self] _ in
            takeIncoming()
            return true
        }]
    }

    /// Runs the loop on a thread of its own, for good.
    public func start() {
        if BackgroundThread.start(name: "moon.loop", { [self] in runForever() }) { return }
        // No POSIX thread now: Foundation's may still come (it reports its
        // own failure).
        let thread = Thread { [self] in runForever() }
        thread.name = "moon.loop"
        thread.start()
    }

    /// Makes the calling thread the loop's, instead of a thread of its own
    /// (`start`): it then runs the loop with `run(until:)`.
    public func adoptCurrentThread() {
        pthread_setspecific(EventLoop.threadKey, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        pthread_getspecific(EventLoop.threadKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Hands watches to the loop (from any thread).
    public func add(_ newWatches: [Watch]) {
        if isCurrent {
            watches += newWatches
            dirty = true
            return
        }
        let mustWake: Bool = lock.withLock { _ in
            incoming += newWatches
            return scheduleWake()
        }
        if mustWake { wake() }
    }

    /// Stops watching (on the loop's thread): before the descriptor is
    /// closed, so the next poll never sees a number that may be reused.
    public func cancel(_ watch: Watch) {
        watch.isDone = true
        dirty = true
    }

    /// Runs `action` on the loop's thread, after what is already posted
    /// (from any thread; from the loop itself without a system call).
    public func post(_ action: @escaping () -> Void) {
        if isCurrent {
            work.append(action)
            return
        }
        let mustWake: Bool = lock.withLock { _ in
            incomingWork.append(action)
            return scheduleWake()
        }
        if mustWake { wake() }
    }

    /// Runs `action` on the loop's thread at the `CLOCK_MONOTONIC` time
    /// `deadline` (nanoseconds, `LinuxCalls.monotonicNanoseconds`) or soon
    /// after. Timers cannot be cancelled: guard the action instead.
    public func post(atMonotonic deadline: UInt64, _ action: @escaping () -> Void) {
        if isCurrent {
            timers.push(deadline, action)
        } else {
            post { [self] in timers.push(deadline, action) }
        }
    }

    /// Runs `action` on the loop's thread `nanoseconds` from now or soon
    /// after.
    public func post(afterNanoseconds nanoseconds: UInt64, _ action: @escaping () -> Void) {
        let (deadline, overflow) = LinuxCalls.monotonicNanoseconds().addingReportingOverflow(nanoseconds)
        post(atMonotonic: overflow ? UInt64.max : deadline, action)
    }

    /// Runs turns of the loop on the calling thread, which must be the
    /// loop's (`adoptCurrentThread`), until `finished()` is true (checked
    /// after the work of a turn and after its poll, so the loop never
    /// blocks in `poll` once its owner is done).
    public func run(until finished: () -> Bool) {
        precondition(isCurrent, "EventLoop.run(until:) is for the thread that adopted the loop")
        while !finished() {
            runTimersAndWork()
            if finished() { return }
            pollOnce(timeout: work.isEmpty ? pollTimeout() : 0)
        }
    }

    private func runForever() {
        adoptCurrentThread()
        run(until: { false })
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

    /// The poll timeout in milliseconds until the next timer (-1: none).
    private func pollTimeout() -> Int32 {
        guard let deadline = timers.nextDeadline else { return -1 }
        let now = LinuxCalls.monotonicNanoseconds()
        if deadline <= now { return 0 }
        // Round up so the loop never wakes just before the deadline and spins.
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    /// Polls once, for at most `timeout` milliseconds (-1: no limit), and
    /// calls the handlers of the descriptors that are ready.
    private func pollOnce(timeout: Int32) {
        if dirty {
            watches.removeAll { $0.isDone }
            pollFds = watches.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            dirty = false
        }
        let ready = poll(&pollFds, nfds_t(pollFds.count), timeout)
        guard ready > 0 else { return }  // EINTR is poll's only transient failure here
        let current = watches
        for index in pollFds.indices where pollFds[index].revents != 0 {
            let events = pollFds[index].revents
            pollFds[index].revents = 0
            // Skipped when a handler before it in this turn cancelled it.
            let watch = current[index]
            if watch.isDone { continue }
            if !watch.handler(events) { cancel(watch) }
        }
    }

    private func takeIncoming() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &sink, sink.count) > 0 {}
        let (newWatches, newWork): ([Watch], [() -> Void]) = lock.withLock { _ in
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
}
