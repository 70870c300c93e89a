import Glibc

/// Ties a child's process group to moon's own life, so that the group is
/// SIGKILLed by the kernel when moon dies in any way — even by SIGKILL, when
/// no code of moon runs any more. `posix_spawn` cannot set
/// `PR_SET_PDEATHSIG`, and that would only cover the group's leader anyway
/// (and fire when the spawning *thread* exits, which Dispatch threads do).
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
/// a recycled pid is never hit. In normal operation the launcher closes the
/// pair when it reaps the child, right after SIGKILLing its group itself, so
/// the kernel's signal then is a no-op.
///
/// Cost: one `pipe2`, six `fcntl` and two `close` per child (a few µs), and
/// two descriptors in moon while the child runs.
/// Limits: a process that left the group (`setsid`, `setpgid`) is not
/// covered, nor one that changed its user id (the kernel's SIGIO permission
/// check); and a child is unprotected for the microseconds between
/// `posix_spawn` returning and `arm` (moon must exist for the pid to be known).
struct DeathPipe {
    let readEnd: Int32
    let writeEnd: Int32

    /// `F_SETSIG` and `O_ASYNC` are GNU/BSD names the Glibc module does not
    /// import; the values are the same on every Linux architecture Swift
    /// supports (x86_64, aarch64).
    private static let F_SETSIG: Int32 = 10
    private static let O_ASYNC: Int32 = 0o20000

    /// Makes an unarmed pair; throws the errno of `pipe2` (EMFILE…).
    static func make() -> Result<DeathPipe, ProcessLaunchErrno> {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC) == 0 else { return .failure(ProcessLaunchErrno(code: errno)) }
        return .success(DeathPipe(readEnd: fds[0], writeEnd: fds[1]))
    }

    /// Arms both ends for `group`. Returns false if the kernel refused (the
    /// child is then only covered by moon's own cleanup).
    @discardableResult
    func arm(group: pid_t) -> Bool {
        var ok = true
        for fd in [readEnd, writeEnd] {
            // Owner and signal first: O_ASYNC must never fire the default SIGIO.
            if fcntl(fd, F_SETOWN, -group) != 0 { ok = false; continue }
            if fcntl(fd, DeathPipe.F_SETSIG, SIGKILL) != 0 { ok = false; continue }
            let flags = fcntl(fd, F_GETFL)
            if flags < 0 || fcntl(fd, F_SETFL, flags | DeathPipe.O_ASYNC) != 0 { ok = false }
        }
        return ok
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
