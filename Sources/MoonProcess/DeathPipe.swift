import Glibc
import MoonSystem

/// Ties a child's process group to moon's own life, so that the group is
/// SIGKILLed by the kernel when moon dies in any way — even by SIGKILL, when
/// no code of moon runs any more. `PR_SET_PDEATHSIG` would only cover the
/// group's leader (and fire when the spawning *thread* exits, which Dispatch
/// threads do).
///
/// How: one pipe per child, both ends held by moon only (`O_CLOEXEC`; the
/// child never sees them). Each end is armed for signal-driven I/O with the
/// child's process group as owner and SIGKILL as the signal
/// (`F_SETOWN(-pgid)`, `F_SETSIG(SIGKILL)`, `O_ASYNC`). When moon dies, the
/// kernel closes its descriptors; the first end of the pair to be released
/// leaves the other one without a peer, and the pipe then signals the owner
/// of the remaining end: SIGKILL to the whole group. Arming both ends makes
/// this independent of the order in which the kernel releases them.
///
/// The kernel records the owner as a reference to the pid, not a number, so
/// a recycled pid is never hit. The spawner sets the owner (`death_fds` of
/// `moon_spawn_request`) right after `posix_spawn`, before it returns. When the
/// launcher reaps a child (right after SIGKILLing its group itself), it keeps
/// the pair for the next child, which only needs a new owner: an owner whose
/// group is gone is never signalled.
///
/// Cost: two `fcntl` per child once a pair exists (a new pair: one `pipe2`
/// and four `fcntl`), and two descriptors in moon per pair.
/// Limits: a process that left the group (`setsid`, `setpgid`) is not
/// covered, nor one that changed its user id (the kernel's SIGIO permission
/// check); with posix_spawn, a child is unprotected for the microseconds
/// between its start and the spawn returning.
struct DeathPipe {
    let readEnd: Int32
    let writeEnd: Int32

    /// `F_SETSIG` and `O_ASYNC` are GNU/BSD names the Glibc module does not
    /// import; the values are the same on every Linux architecture Swift
    /// supports (x86_64, aarch64).
    private static let F_SETSIG: Int32 = 10
    private static let O_ASYNC: Int32 = 0o20000

    /// Makes an unarmed pair, for the spawner to arm: both ends get SIGKILL
    /// as their signal and `O_ASYNC`, with no owner yet (so nothing is
    /// signalled).
    /// Fails with the errno of `pipe2` (EMFILE…).
    static func make() -> Result<DeathPipe, ProcessLaunchErrno> {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC) == 0 else { return .failure(ProcessLaunchErrno(code: errno)) }
        for fd in fds {
            // The signal first: O_ASYNC must never fire the default SIGIO.
            // (F_SETFL sets only the status flags; the access mode stays.)
            _ = fcntl(fd, DeathPipe.F_SETSIG, SIGKILL)
            _ = fcntl(fd, F_SETFL, DeathPipe.O_ASYNC)
        }
        return .success(DeathPipe(readEnd: fds[0], writeEnd: fds[1]))
    }

    /// Closes both ends. If armed, the group gets one more SIGKILL from the
    /// kernel: call this only once the group is meant to be dead.
    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}

/// An errno, as a typed failure.
struct ProcessLaunchErrno: Error {
    let code: Int32
}
