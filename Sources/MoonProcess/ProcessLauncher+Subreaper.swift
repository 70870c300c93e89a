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
    /// nothing). What each member used is added to `usage` (`wait4` on the
    /// group: `waitid` gives no `rusage`). The common case, a group without
    /// such members, costs one call. A member stuck in the kernel longer
    /// than 100 ms is left to the periodic sweep. Call with `lock` held.
    func reapGroupLocked(_ group: pid_t, into usage: inout ProcessUsage) {
        let deadline = LinuxCalls.monotonicNanoseconds() + 100_000_000
        while true {
            var status: Int32 = 0
            var used = rusage()
            let reaped = wait4(-group, &status, WNOHANG, &used)
            if reaped < 0 {
                if errno == EINTR { continue }
                return  // ECHILD: no member of the group is moon's child
            }
            if reaped > 0 {
                usage.add(used)
                continue
            }
            // Members still dying.
            if LinuxCalls.monotonicNanoseconds() >= deadline { return }
            usleep(50)
        }
    }

    /// Reaps the zombies that are not the launcher's own children, adding
    /// what each used to the node whose group it was in. It peeks
    /// with `WNOWAIT` and stops at one of its own (the loop reaps that one;
    /// the next sweep looks again) or while another thread is spawning (the
    /// zombie may be that child, not yet registered). Call with `lock` held.
    private func reapOrphansLocked() {
        while spawnsInFlight == 0 {
            var info = siginfo_t()
            guard waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return }
            let pid = info._sifields._sigchld.si_pid
            guard pid > 0, live[pid] == nil else { return }
            // A member of a running node's group (a background job whose
            // parent ended) counts toward that node's usage: its group
            // (still readable on a zombie) names the node's leader.
            let group = getpgid(pid)
            var status: Int32 = 0
            var used = rusage()
            guard wait4(pid, &status, WNOHANG, &used) == pid else { continue }
            if group > 0, let owner = live[group], !owner.isReaped { owner.usage.add(used) }
        }
    }
}
