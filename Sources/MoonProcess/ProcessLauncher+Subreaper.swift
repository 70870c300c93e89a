import Glibc
import MoonEventLoop
import MoonSystem

/// Orphans: processes that left their node's group (`setsid`, a daemon's
/// child) are re-parented to moon once it is their subreaper, and reaped
/// here, since PID 1 may not.
extension ProcessLauncher {
    /// Makes moon the reaper of its orphaned descendants
    /// (`prctl(PR_SET_CHILD_SUBREAPER)`) and reaps them on its event loop
    /// (see `sweepOrphansPeriodically`). After this the launcher reaps every
    /// child of the process: nothing else in moon may wait for its own
    /// children. Idempotent.
    public func becomeSubreaper() throws {
        let alreadyOn: Bool = lock.withLock { _ in
            defer { isSubreaper = true }
            return isSubreaper
        }
        if alreadyOn { return }
        guard LinuxCalls.becomeSubreaper() == 0 else {
            let code = errno
            lock.withLock { _ in isSubreaper = false }
            throw ProcessLaunchError(kind: .systemError, program: "moon", errno: code,
                                     message: "cannot become a child subreaper: \(ProcessLaunchError.errorText(code))")
        }
        let loop = try startedMonitor(program: "moon").loop
        sweepOrphansPeriodically(on: loop)
    }

    /// The members of a reaped child's group that were re-parented to moon
    /// are reaped with it (`reapGroupLocked`); other orphans (processes that
    /// left their node's group) every `orphanSweepInterval` on the loop: one
    /// `waitid` call when there is nothing to reap. (A thread blocked in
    /// `waitid(P_ALL)` would reap them at once, but would wake up for every
    /// child of moon's, a thread switch per node.)
    static let orphanSweepInterval: UInt64 = 200_000_000

    private func sweepOrphansPeriodically(on loop: EventLoop) {
        loop.post(afterNanoseconds: Self.orphanSweepInterval) { [self] in
            lock.withLock { _ in reapOrphansLocked() }
            sweepOrphansPeriodically(on: loop)
        }
    }

    /// After a group's leader is reaped: waits (briefly) for the members
    /// that were re-parented to moon to die of the SIGKILL they were just
    /// sent, and reaps them, so that when a node completes nothing of it
    /// exists any more, not even a zombie (a dependent's `kill -0` finds
    /// nothing). The common case, a group without such members, costs one
    /// `waitid`. A member stuck in the kernel longer than 100 ms is left to
    /// the periodic sweep. Call with `lock` held.
    func reapGroupLocked(_ group: pid_t) {
        let deadline = LinuxCalls.monotonicNanoseconds() + 100_000_000
        while true {
            var info = siginfo_t()
            if waitid(P_PGID, id_t(group), &info, WEXITED | WNOHANG) != 0 {
                if errno == EINTR { continue }
                return  // ECHILD: no member of the group is moon's child
            }
            if info._sifields._sigchld.si_pid != 0 { continue }  // reaped one
            // Members still dying.
            if LinuxCalls.monotonicNanoseconds() >= deadline { return }
            usleep(50)
        }
    }

    /// Reaps the zombies that are not the launcher's own children. It peeks
    /// with `WNOWAIT` and stops at one of its own (the loop reaps that one;
    /// the next sweep looks again) or while another thread is spawning (the
    /// zombie may be that child, not yet registered). Call with `lock` held.
    private func reapOrphansLocked() {
        while spawnsInFlight == 0 {
            var info = siginfo_t()
            guard waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return }
            let pid = info._sifields._sigchld.si_pid
            guard pid > 0, live[pid] == nil else { return }
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
    }
}
