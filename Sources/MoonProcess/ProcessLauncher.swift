import Foundation
import Glibc

/// The real `ProcessLaunching`: `posix_spawn`, one I/O thread for all
/// children, and process groups that are killed whole.
///
/// There is one launcher per process (`shared`): it reaps its children by
/// pid (through pidfds), never with `waitpid(-1)`, so other code in the same
/// process may still spawn and wait for its own children — except after
/// `becomeSubreaper()`, which makes this launcher reap every child.
///
/// Each child:
/// - starts with `posix_spawn` in its own process group (pgid = pid), its
///   signal mask cleared and every signal's disposition set to default;
/// - has stdin on `/dev/null`, stdout and stderr on two pipes, and no other
///   descriptor (pipes are `O_CLOEXEC` and the child runs `closefrom(3)`);
/// - when its main process exits, its whole group is SIGKILLed before it is
///   reaped: no background job of a node outlives the node.
///
/// If moon itself is SIGKILLed, its children are not killed by this
/// launcher (`PR_SET_PDEATHSIG` cannot be set through `posix_spawn`).
/// Options for later: spawn through a tiny exec helper that sets
/// PDEATHSIG (one more exec per node); put nodes in a cgroup and kill it;
/// or have a watchdog process (holding a pipe to moon) kill the groups when
/// the pipe reaches EOF.
public final class ProcessLauncher: ProcessLaunching, @unchecked Sendable {
    /// The launcher of this process.
    public static let shared = ProcessLauncher()

    let lock = Lock()

    // Guarded by `lock`.
    private var live: [pid_t: LaunchedProcess] = [:]
    private var spawnsInFlight = 0
    private var spawnGeneration: UInt64 = 0
    private var ioLoop: IOLoop?
    private var isSubreaper = false

    private init() {}

    // MARK: Launching

    public func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> any ProcessHandle {
        let program = spec.executable
        let loop = try startedLoop(program: program)
        try ExecutableResolver.checkWorkingDirectory(spec)
        let path = try ExecutableResolver.resolve(spec)

        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&stdoutPipe, O_CLOEXEC) == 0 else {
            throw ProcessLaunchError.from(errno: errno, program: program, doing: "creating a pipe")
        }
        guard LinuxCalls.pipe2(&stderrPipe, O_CLOEXEC) == 0 else {
            let code = errno
            close(stdoutPipe[0]); close(stdoutPipe[1])
            throw ProcessLaunchError.from(errno: code, program: program, doing: "creating a pipe")
        }
        let readEnds = [stdoutPipe[0], stderrPipe[0]]
        for fd in readEnds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        var actionStatus = LinuxCalls.addClosefrom(&actions, 3)
        if let directory = spec.workingDirectory, actionStatus == 0 {
            actionStatus = LinuxCalls.addChdir(&actions, directory)
        }
        guard actionStatus == 0 else {
            ([stdoutPipe, stderrPipe].flatMap { $0 }).forEach { close($0) }
            throw ProcessLaunchError.from(errno: actionStatus, program: program, doing: "preparing the spawn")
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = [program] + spec.arguments
        let envp = spec.environment.map { "\($0.key)=\($0.value)" }

        lock.withLock { spawnsInFlight += 1 }
        var pid: pid_t = 0
        var status: Int32 = 0
        // ETXTBSY: a script written a moment ago (by a node, or by moon's
        // `write-file`) can still be open for writing in a child that another
        // thread is just spawning, until that child execs. It passes within
        // microseconds, so try again briefly instead of failing the node.
        for attempt in 0..<50 {
            status = withCStringArray(argv) { argvPointers in
                withCStringArray(envp) { envPointers in
                    posix_spawn(&pid, path, &actions, &attributes, argvPointers, envPointers)
                }
            }
            guard status == ETXTBSY else { break }
            usleep(useconds_t(min(attempt + 1, 10) * 1000))
        }
        close(stdoutPipe[1])
        close(stderrPipe[1])

        func abandon() {
            lock.withLock {
                spawnsInFlight -= 1
                lock.broadcast()
            }
            readEnds.forEach { close($0) }
        }

        guard status == 0 else {
            abandon()
            throw ProcessLaunchError.from(errno: status, program: program, doing: "exec")
        }
        let pidfd = LinuxCalls.pidfdOpen(pid)
        guard pidfd >= 0 else {
            let code = errno
            _ = Glibc.kill(-pid, SIGKILL)
            var ignored: Int32 = 0
            while waitpid(pid, &ignored, 0) < 0 && errno == EINTR {}
            abandon()
            throw ProcessLaunchError.from(errno: code, program: program, doing: "watching the process")
        }

        let process = LaunchedProcess(pid: pid, program: program, launcher: self, onOutput: onOutput, onExit: onExit)
        let pipes = [
            IOLoop.Pipe(fd: stdoutPipe[0], stream: .stdout, process: process),
            IOLoop.Pipe(fd: stderrPipe[0], stream: .stderr, process: process),
        ]
        process.pipes = pipes
        process.openPipes = pipes.count
        lock.withLock {
            live[pid] = process
            spawnsInFlight -= 1
            spawnGeneration &+= 1
            lock.broadcast()
        }
        loop.add(pipes.map { IOLoop.Watch(fd: $0.fd, kind: .pipe($0)) } + [IOLoop.Watch(fd: pidfd, kind: .exit(process))])
        return process
    }

    private func startedLoop(program: String) throws -> IOLoop {
        try lock.withLock {
            if let ioLoop { return ioLoop }
            do {
                let loop = try IOLoop(lock: lock) { [unowned self] process in reap(process) }
                loop.start()
                ioLoop = loop
                return loop
            } catch let error as POSIXError {
                throw ProcessLaunchError.from(errno: error.code.rawValue, program: program, doing: "starting the launcher")
            }
        }
    }

    /// Called on the I/O thread when `process`'s pidfd is readable: kills
    /// what is left of its group (the leader is a zombie, so the pgid is
    /// still its own), then reaps the leader.
    private func reap(_ process: LaunchedProcess) -> Termination {
        lock.withLock {
            let pid = process.pid
            _ = Glibc.kill(-pid, SIGKILL)
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(pid, &status, WNOHANG)
            } while result < 0 && errno == EINTR
            process.isReaped = true
            live[pid] = nil
            lock.broadcast()
            return result == pid ? Termination(waitStatus: status) : .exited(-1)
        }
    }

    // MARK: Shutdown and orphans

    /// SIGKILLs every child's group that is still running, and, after
    /// `becomeSubreaper()`, every orphan re-parented to moon. For moon's own
    /// shutdown; call it from ordinary code (a DispatchSource signal handler
    /// is fine), not from an async-signal handler: it takes a lock.
    /// Completion callbacks still follow as the children are reaped.
    public func killAll() {
        lock.withLock {
            for (pid, process) in live where !process.isReaped {
                process.killSent = true
                _ = Glibc.kill(-pid, SIGKILL)
            }
            // Orphans are reaped under this lock, so none of these pids can
            // have been recycled before we signal it.
            if isSubreaper {
                for pid in LinuxCalls.childPids() where live[pid] == nil {
                    _ = Glibc.kill(pid, SIGKILL)
                }
            }
        }
    }

    /// Makes moon the reaper of its orphaned descendants
    /// (`prctl(PR_SET_CHILD_SUBREAPER)`) and starts a thread that reaps them,
    /// since PID 1 here does not. After this the launcher reaps every child
    /// of the process with `waitid(P_ALL)`: nothing else in moon may wait
    /// for its own children. Idempotent.
    public static func becomeSubreaper() throws {
        try shared.startSubreaping()
    }

    private func startSubreaping() throws {
        let alreadyOn: Bool = lock.withLock {
            defer { isSubreaper = true }
            return isSubreaper
        }
        if alreadyOn { return }
        guard LinuxCalls.prctl(LinuxCalls.PR_SET_CHILD_SUBREAPER, 1) == 0 else {
            let code = errno
            lock.withLock { isSubreaper = false }
            throw ProcessLaunchError(kind: .systemError, program: "moon", errno: code,
                                     message: "cannot become a child subreaper: \(ProcessLaunchError.errorText(code))")
        }
        let thread = Thread { [self] in reapOrphans() }
        thread.name = "moon.process-orphans"
        thread.start()
    }

    /// Reaps children the launcher did not start. It peeks with `WNOWAIT`,
    /// leaves the launcher's own children to the I/O thread (waiting until
    /// that one has reaped them), and sleeps on the lock's condition while
    /// there are no children at all.
    private func reapOrphans() {
        while true {
            let generation = lock.withLock { spawnGeneration }
            var info = siginfo_t()
            if waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0 {
                if errno == EINTR { continue }
                // ECHILD: no children until the next spawn.
                lock.withLock {
                    while spawnGeneration == generation { lock.wait() }
                }
                continue
            }
            let pid = info._sifields._sigchld.si_pid
            lock.withLock {
                if live[pid] != nil || spawnsInFlight > 0 {
                    // Ours (or maybe ours, still being registered): the I/O
                    // thread reaps it; wait for the next change and look again.
                    lock.wait()
                    return
                }
                var status: Int32 = 0
                _ = waitpid(pid, &status, WNOHANG)
            }
        }
    }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
