import Glibc
import MoonCommand
import MoonEventLoop

/// The real `ProcessHandle`, and the launcher's record of one child.
///
/// Signals go to the whole group (`kill(-pid, …)`), and only while the
/// group's leader is not yet reaped. The flags below and the reaping share
/// the launcher's lock, so a signal is either sent before the reap or not at
/// all. An unreaped leader (alive or zombie) pins its pid, which is the
/// pgid, so the group id cannot have been recycled; and at reap time the
/// launcher SIGKILLs the group first, so nothing of the group outlives the
/// leader's reap anyway.
final class LaunchedProcess: ProcessHandle, @unchecked Sendable {
    let pid: pid_t
    let program: String
    // Called, and released once the process completes, on the loop's thread.
    var onOutput: @Sendable (OutputLine) -> Void
    var onExit: @Sendable (Termination, ProcessUsage?) -> Void
    private unowned let launcher: ProcessLauncher
    /// Where the grace period's SIGKILL waits: the launcher's event loop,
    /// the clock of every other deadline in moon (a test sets a
    /// `TestScheduler` before `terminate`, to drive it on virtual time).
    var graceScheduler: DateScheduler

    // Guarded by `launcher.lock`.
    var isReaped = false
    var termSent = false
    var killSent = false
    /// Closed when the process is reaped.
    var deathPipe: DeathPipe?
    /// What the group's processes that moon reaped used: members reaped by
    /// the orphan sweep while the leader runs, then the leader and the rest
    /// of its group (`reap`).
    var usage = ProcessUsage()
    /// The memory cgroup it started in, read and removed when it is reaped.
    var cgroup: MemoryCgroups.Group?

    // Owned by the loop's thread (`ChildMonitor`; handed over through the
    // lock at registration).
    var pipes: [ChildMonitor.Pipe] = []
    var openPipes = 0
    var termination: Termination?
    var exitTime: UInt64 = 0
    var lastDataTime: UInt64 = 0
    var isCompleted = false

    init(
        pid: pid_t, program: String, launcher: ProcessLauncher, loop: EventLoop,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination, ProcessUsage?) -> Void
    ) {
        self.pid = pid
        self.program = program
        self.launcher = launcher
        graceScheduler = LoopScheduler(loop: loop)
        self.onOutput = onOutput
        self.onExit = onExit
    }

    /// SIGTERM now; the SIGKILL after `grace` is a timer of `graceScheduler`,
    /// a no-op once the process is reaped.
    func terminate(grace: Duration) {
        let pending: Bool = launcher.lock.withLock { _ in
            if isReaped || killSent { return false }
            if !termSent {
                termSent = true
                _ = Glibc.kill(-pid, SIGTERM)
            }
            return true
        }
        guard pending else { return }
        if grace <= .zero { return kill() }
        graceScheduler.schedule(after: grace) { [self] in kill() }
    }

    /// `usage`, read under the lock that guards it.
    var measuredUsage: ProcessUsage {
        launcher.lock.withLock { _ in usage }
    }

    func kill() {
        launcher.lock.withLock { _ in
            guard !isReaped && !killSent else { return }
            killSent = true
            _ = Glibc.kill(-pid, SIGKILL)
        }
    }
}
