import Glibc
import MoonEventLoop

/// ^Z while an interactive node has the terminal (docs/terminal.md): the
/// terminal stops the node's group only, which moon is told of by no
/// descriptor (a pidfd reports exits). So while such a child runs, moon
/// looks for its stop a few times a second and, on one, does what a
/// shell's job control expects of a job: takes the terminal back, stops
/// every other node and itself; on `fg` it hands the terminal to the node
/// again and continues them all.
extension ProcessLauncher {
    /// How often a foreground child is looked at for a stop.
    static let stopPollNanoseconds: UInt64 = 200_000_000

    func watchForStop(pid: pid_t, fd: Int32, restore: TerminalRestore, loop: EventLoop) {
        loop.post(afterNanoseconds: Self.stopPollNanoseconds) { [weak self] in
            guard let self else { return }
            let alive = self.lock.withLock { _ in self.live[pid].map { !$0.isReaped } ?? false }
            guard alive else { return }
            var info = siginfo_t()
            // WSTOPPED without WEXITED: never reaps, only takes a stop's report.
            if waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOHANG) == 0, info._sifields._sigchld.si_pid == pid {
                self.suspendForStoppedForeground(pid: pid, fd: fd, restore: restore)
            }
            self.watchForStop(pid: pid, fd: fd, restore: restore, loop: loop)
        }
    }

    /// The node stopped (^Z): moon's group gets the terminal back, with its
    /// modes; every node and moon stop, so the shell sees its job stopped.
    /// Continued (`fg`), the node's group is the foreground again, and all continue.
    private func suspendForStoppedForeground(pid: pid_t, fd: Int32, restore: TerminalRestore) {
        restore.restore()
        suspend(whileStopped: {
            restore.save()
            restore.handOver(to: pid)
        })
    }
}
