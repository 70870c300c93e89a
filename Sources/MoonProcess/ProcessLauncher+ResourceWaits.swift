import Glibc
import MoonEventLoop
import MoonSystem

/// Out of descriptors or processes: launches wait for a running child to
/// end (its end gives resources back) and try again, in the order they
/// came. Off the loop a launch waits in place (`waitForReap`); on the loop
/// it never blocks: its caller queues a retry (`waitForResources`), which
/// the loop runs after the next child's end, while events, timers and
/// signals go on.
extension ProcessLauncher {
    /// Waits until a child is reaped after `generation`; false when waiting
    /// cannot help or patience ran out. (Not on the loop's thread: it is the
    /// one that reaps.)
    func waitForReap(after generation: UInt64, lastProgress: inout UInt64) -> Bool {
        while true {
            let (reaped, hopeless): (Bool, Bool) = lock.withLock { _ in
                if reapGeneration != generation { return (true, false) }
                let deadline = lastProgress &+ patienceNanoseconds
                return (false, live.isEmpty || patienceNanoseconds == 0 || LinuxCalls.monotonicNanoseconds() >= deadline)
            }
            if reaped {
                lastProgress = LinuxCalls.monotonicNanoseconds()
                return true
            }
            if hopeless { return false }
            usleep(1000)
        }
    }

    /// A new launch on the loop while others wait for resources goes behind
    /// them (it throws, and its caller queues it), so that nodes start in
    /// the order the runner chose, not whichever came after a child's end.
    /// (Not behind a busy program's retries: those wait for that program
    /// only.)
    var mustQueueBehindWaiters: Bool {
        guard let loop = lock.withLock({ _ in monitor?.loop }), loop.isCurrent else { return false }
        return !resourceWaiters.isEmpty && !retryingWaiters && !busyRetryPosted && canWaitForResources
    }

    /// Whether a launch on the loop that ran out of resources may wait: a
    /// child is running (its end gives resources back) and patience allows.
    var canWaitForResources: Bool {
        lock.withLock { _ in !live.isEmpty && patienceNanoseconds > 0 }
    }

    /// After `launch` threw `.outOfResources` on moon's event loop: queues
    /// `retry` to be called on the loop once a child has ended (or, for a
    /// busy program, after a short timer), and returns true; false when
    /// waiting cannot help (no child is running, or this is not the loop's
    /// thread): then fail. `retry(false)` tries again and returns false if
    /// still out of resources (it stays first in the queue) or true when it
    /// is done. `retry(true)` says waiting is over (no child ended within
    /// `outOfResourcesPatience`, or none is left): it fails and returns
    /// true. Retries run in the order of the calls, so the nodes start in
    /// the order the runner chose.
    public func waitForResources(_ retry: @escaping (_ giveUp: Bool) -> Bool) -> Bool {
        guard let loop = lock.withLock({ _ in monitor?.loop }), loop.isCurrent,
              lastLaunchWasBusy || canWaitForResources else { return false }
        if resourceWaiters.isEmpty {
            lock.withLock { _ in waitingSince = LinuxCalls.monotonicNanoseconds() }
            checkPatience(on: loop)
            busyRetries = 0
        }
        resourceWaiters.append(retry)
        if lastLaunchWasBusy && resourceWaiters.count == 1 { retryBusyLater(on: loop) }
        return true
    }

    /// When waiting has lasted `outOfResourcesPatience` since the later of
    /// its start and the last child's end.
    private var waitDeadline: UInt64 {
        lock.withLock { _ in max(waitingSince, lastCompletion) &+ patienceNanoseconds }
    }

    private func checkPatience(on loop: EventLoop) {
        loop.post(atMonotonic: waitDeadline) { [self] in
            guard !resourceWaiters.isEmpty else { return }
            if LinuxCalls.monotonicNanoseconds() >= waitDeadline {
                giveUpWaiters()
            } else {
                checkPatience(on: loop)
            }
        }
    }

    private func giveUpWaiters() {
        let waiters = resourceWaiters
        resourceWaiters = []
        for retry in waiters { _ = retry(true) }
    }

    /// A child has completed (reaped, its pipes closed): on the loop, after
    /// what the loop is doing now, the waiting launches try again.
    func childCompleted(on loop: EventLoop) {
        lock.withLock { _ in lastCompletion = LinuxCalls.monotonicNanoseconds() }
        guard !resourceWaiters.isEmpty, !waitersRetryPosted else { return }
        waitersRetryPosted = true
        loop.post { [self] in
            waitersRetryPosted = false
            retryWaiters(on: loop)
        }
    }

    /// The first waiter's program was busy: it tries again after a short
    /// timer, not at the next child's end (there may be none).
    private func retryBusyLater(on loop: EventLoop) {
        guard !busyRetryPosted else { return }
        busyRetryPosted = true
        loop.post(afterNanoseconds: Self.busyRetryDelay(busyRetries)) { [self] in
            busyRetryPosted = false
            retryWaiters(on: loop)
        }
    }

    /// Retries the waiters in order until one is still short.
    private func retryWaiters(on loop: EventLoop) {
        retryingWaiters = true
        defer { retryingWaiters = false }
        while let first = resourceWaiters.first {
            lastLaunchWasBusy = false
            if first(false) {
                resourceWaiters.removeFirst()
                busyRetries = 0
                continue
            }
            guard lastLaunchWasBusy else { break }
            busyRetries += 1
            if busyRetries < Self.busyRetryLimit {
                retryBusyLater(on: loop)
                return
            }
            // Busy for good: this one fails, the next ones try.
            resourceWaiters.removeFirst()
            busyRetries = 0
            _ = first(true)
        }
        // Still short and no child left whose end could help.
        if !resourceWaiters.isEmpty && lock.withLock({ _ in live.isEmpty }) { giveUpWaiters() }
    }
}
