/// moon's event loop: the launcher's own thread, which reads every child's
/// output and reaps every child, and also runs work posted to it and timers.
///
/// Code that reacts to processes (moon's runner) runs here to avoid a
/// thread hand-off per process: callbacks of `ProcessLaunching` arrive on
/// this thread, so work posted from them, and processes launched from that
/// work, cost no wake-up of another thread. Work must not block: while it
/// runs, no output is read and no child is reaped. (A `launch` on this
/// thread that runs out of descriptors does not wait: its caller queues a
/// retry, see `ProcessLauncher.waitForResources`.)
public final class EventLoop: @unchecked Sendable {
    let loop: IOLoop

    init(loop: IOLoop) {
        self.loop = loop
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool { loop.isCurrent }

    /// Runs `action` on the loop's thread after the work already posted.
    /// From the loop's own thread this is an append to a list.
    public func post(_ action: @escaping () -> Void) {
        loop.post(action)
    }

    /// Runs `action` on the loop's thread `nanoseconds` from now (on the
    /// monotonic clock) or soon after. Timers cannot be cancelled here:
    /// guard the action instead (see MoonRun's `LoopScheduler`).
    public func post(afterNanoseconds nanoseconds: UInt64, _ action: @escaping () -> Void) {
        let now = LinuxCalls.monotonicNanoseconds()
        let (deadline, overflow) = now.addingReportingOverflow(nanoseconds)
        loop.post(atMonotonic: overflow ? UInt64.max : deadline, action)
    }

    /// Runs the loop on the calling thread, which must be the one that
    /// adopted it (`ProcessLauncher.adoptEventLoop`), until `finished()` is
    /// true; posted work and I/O are handled meanwhile.
    public func run(until finished: () -> Bool) {
        precondition(loop.isCurrent, "EventLoop.run(until:) is for the thread that adopted the loop")
        loop.run(until: finished)
    }

    /// Calls `handler` on the loop with each of `signals` (SIGINT, SIGTERM…)
    /// moon receives from now on, instead of their default action. Throws
    /// a `POSIXError` when the signals cannot be taken over.
    public func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        try loop.forwardSignals(signals, to: handler)
    }
}
