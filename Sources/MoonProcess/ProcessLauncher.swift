import CMoonSpawn
import Foundation
import Glibc

/// The real `ProcessLaunching`: moon's own spawner (`moon_spawn` in the
/// CMoonSpawn target: `clone` with CLONE_VM, CLONE_VFORK and CLONE_PIDFD),
/// one thread for all children (the `EventLoop`, which moon's runner
/// shares), and process groups that are killed whole.
///
/// There is one launcher per process (`shared`): it reaps its children by
/// pid (through pidfds), never with `waitpid(-1)`, so other code in the same
/// process may still spawn and wait for its own children — except after
/// `becomeSubreaper()`, which makes this launcher reap every child.
///
/// Each child:
/// - starts in its own process group (pgid = pid), its signal mask cleared
///   and every signal's disposition set to default (even one moon ignores,
///   such as SIGPIPE);
/// - has stdin on `/dev/null`, stdout and stderr on two pipes, and no other
///   descriptor (pipes are `O_CLOEXEC` and the child runs `close_range(3)`);
/// - when its main process exits, its whole group is SIGKILLed before it is
///   reaped: no background job of a node outlives the node.
///
/// If moon itself dies, even by SIGKILL, the kernel SIGKILLs every child's
/// group through its `DeathPipe` (`PR_SET_PDEATHSIG` would miss the rest of
/// the group).
///
/// Out of descriptors or processes, `launch` waits for running children to
/// exit and tries again before it gives up (see `launch`).
public final class ProcessLauncher: ProcessLaunching, @unchecked Sendable {
    /// The launcher of this process.
    public static let shared = ProcessLauncher()

    let lock = Lock()

    // Guarded by `lock`.
    private var live: [pid_t: LaunchedProcess] = [:]
    private var spawnsInFlight = 0
    private var ioLoop: IOLoop?
    private var isSubreaper = false
    /// Death pipes of reaped children, for the next ones (see `DeathPipe`).
    private var spareDeathPipes: [DeathPipe] = []
    static let spareDeathPipeLimit = 256
    private var reapGeneration: UInt64 = 0
    private var patienceNanoseconds: UInt64 = 10_000_000_000
    /// `RLIMIT_NOFILE` as last read (0: not yet; see `hasReserve`).
    private var descriptorLimit: Int32 = 0
    /// Every child's stdin (see `devNullDescriptor`); -1 until first needed.
    private var devNull: Int32 = -1

    private init() {}

    // MARK: Launching

    /// Starts `spec`. When moon is out of descriptors or processes (EMFILE,
    /// ENFILE, EAGAIN, ENOMEM), it does not fail at once: while children of
    /// its own are running, their exits give resources back, so it waits for
    /// the next reap and tries again, and fails with `.outOfResources` only
    /// after `outOfResourcesPatience` without any child exiting (or at once
    /// when no child is running). On the launcher's own thread (the event
    /// loop, which is the one that reaps) it never waits: it throws, and the
    /// caller queues its retry with `waitForResources`, so that events,
    /// timers and signals go on meanwhile.
    public func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> any ProcessHandle {
        var lastProgress = LinuxCalls.monotonicNanoseconds()
        while true {
            let generation = lock.withLock { reapGeneration }
            do {
                if mustQueueBehindWaiters {
                    throw ProcessLaunchError.from(errno: EMFILE, program: spec.executable, doing: "creating a pipe")
                }
                return try launchOnce(spec, onOutput: onOutput, onExit: onExit)
            } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                // Spare death pipes hold descriptors: give them back first.
                if releaseSpareDeathPipes() { continue }
                if let loop = lock.withLock({ ioLoop }), loop.isCurrent {
                    throw canWaitForResources ? error : error.withResourceHint()
                }
                guard waitForReap(after: generation, lastProgress: &lastProgress) else {
                    throw error.withResourceHint()
                }
            }
        }
    }

    /// Closes the spare death pipes; false when there were none.
    private func releaseSpareDeathPipes() -> Bool {
        let spares: [DeathPipe] = lock.withLock {
            defer { spareDeathPipes = [] }
            return spareDeathPipes
        }
        spares.forEach { $0.close() }
        return !spares.isEmpty
    }

    /// How long `launch` keeps waiting for a child to exit when resources
    /// are exhausted (default 10 s; zero fails at once).
    public var outOfResourcesPatience: Duration {
        get { lock.withLock { .nanoseconds(Int64(clamping: patienceNanoseconds)) } }
        set {
            let (seconds, attoseconds) = newValue.components
            let total = max(0, seconds).multipliedReportingOverflow(by: 1_000_000_000)
            let nanoseconds = total.overflow ? UInt64.max : UInt64(total.partialValue) &+ UInt64(max(0, attoseconds / 1_000_000_000))
            lock.withLock { patienceNanoseconds = nanoseconds }
        }
    }

    /// Waits until a child is reaped after `generation`; false when waiting
    /// cannot help or patience ran out. (Not on the loop's thread: it is the
    /// one that reaps.)
    private func waitForReap(after generation: UInt64, lastProgress: inout UInt64) -> Bool {
        lock.withLock {
            while reapGeneration == generation {
                let deadline = lastProgress &+ patienceNanoseconds
                if live.isEmpty || patienceNanoseconds == 0 || LinuxCalls.monotonicNanoseconds() >= deadline {
                    return false
                }
                lock.wait(untilMonotonic: deadline)
            }
            lastProgress = LinuxCalls.monotonicNanoseconds()
            return true
        }
    }

    // MARK: Waiting for resources on the loop

    /// Launches that wait for a child to end (`waitForResources`), in order.
    /// Owned by the loop's thread.
    private var resourceWaiters: [(Bool) -> Bool] = []
    private var waitersRetryPosted = false
    /// Whether the waiters are being retried (they launch then).
    private var retryingWaiters = false
    /// When the first of the current waiters began to wait, and when a
    /// child last completed (its descriptors free again); guarded by `lock`.
    private var waitingSince: UInt64 = 0
    private var lastCompletion: UInt64 = 0

    /// A new launch on the loop while others wait for resources goes behind
    /// them (it throws, and its caller queues it), so that nodes start in
    /// the order the runner chose, not whichever came after a child's end.
    private var mustQueueBehindWaiters: Bool {
        guard let loop = lock.withLock({ ioLoop }), loop.isCurrent else { return false }
        return !resourceWaiters.isEmpty && !retryingWaiters && canWaitForResources
    }

    /// Whether a launch on the loop that ran out of resources may wait: a
    /// child is running (its end gives resources back) and patience allows.
    private var canWaitForResources: Bool {
        lock.withLock { !live.isEmpty && patienceNanoseconds > 0 }
    }

    /// After `launch` threw `.outOfResources` on moon's event loop: queues
    /// `retry` to be called on the loop once a child has ended, and returns
    /// true; false when waiting cannot help (no child is running, or this
    /// is not the loop's thread): then fail. `retry(false)` tries again and
    /// returns false if still out of resources (it stays first in the queue,
    /// for the next child's end) or true when it is done. `retry(true)` says
    /// waiting is over (no child ended within `outOfResourcesPatience`, or
    /// none is left): it fails and returns true. Retries run in the order
    /// of the calls, so the nodes start in the order the runner chose.
    public func waitForResources(_ retry: @escaping (_ giveUp: Bool) -> Bool) -> Bool {
        guard let loop = lock.withLock({ ioLoop }), loop.isCurrent, canWaitForResources else { return false }
        if resourceWaiters.isEmpty {
            lock.withLock { waitingSince = LinuxCalls.monotonicNanoseconds() }
            checkPatience(on: loop)
        }
        resourceWaiters.append(retry)
        return true
    }

    /// When waiting has lasted `outOfResourcesPatience` since the later of
    /// its start and the last child's end.
    private var waitDeadline: UInt64 {
        lock.withLock { max(waitingSince, lastCompletion) &+ patienceNanoseconds }
    }

    private func checkPatience(on loop: IOLoop) {
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
    private func childCompleted(on loop: IOLoop) {
        lock.withLock { lastCompletion = LinuxCalls.monotonicNanoseconds() }
        guard !resourceWaiters.isEmpty, !waitersRetryPosted else { return }
        waitersRetryPosted = true
        loop.post { [self] in
            waitersRetryPosted = false
            retryingWaiters = true
            while let first = resourceWaiters.first {
                guard first(false) else { break }
                resourceWaiters.removeFirst()
            }
            retryingWaiters = false
            // Still short and no child left whose end could help.
            if !resourceWaiters.isEmpty && lock.withLock({ live.isEmpty }) { giveUpWaiters() }
        }
    }

    private func launchOnce(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> any ProcessHandle {
        let program = spec.executable
        let loop = try startedLoop(program: program)
        // Nothing is checked up front (that was four or more system calls
        // per spawn): the spawn finds out, and only when it fails are the
        // directory and the program examined, for a clear message.
        let path = try programPath(spec)
        let stdin = try devNullDescriptor(program: program)

        let deathPipe: DeathPipe
        if let spare = lock.withLock({ spareDeathPipes.popLast() }) {
            deathPipe = spare
        } else {
            switch DeathPipe.make() {
            case .success(let pair): deathPipe = pair
            case .failure(let failure):
                throw ProcessLaunchError.from(errno: failure.code, program: program, doing: "creating a pipe")
            }
        }
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&stdoutPipe, O_CLOEXEC) == 0 else {
            let code = errno
            deathPipe.close()
            throw ProcessLaunchError.from(errno: code, program: program, doing: "creating a pipe")
        }
        guard LinuxCalls.pipe2(&stderrPipe, O_CLOEXEC) == 0 else {
            let code = errno
            close(stdoutPipe[0]); close(stdoutPipe[1])
            deathPipe.close()
            throw ProcessLaunchError.from(errno: code, program: program, doing: "creating a pipe")
        }
        // Keep a reserve: the pidfd still comes, and moon's own code (the
        // state store, libdispatch's first worker, which crashes without a
        // descriptor for its epoll) must still find some when nodes have
        // taken the rest. Descriptors are numbered lowest-free first, so
        // the highest new one tells how many are left.
        if !hasReserve(after: max(stderrPipe[0], stderrPipe[1])) {
            [stdoutPipe[0], stdoutPipe[1], stderrPipe[0], stderrPipe[1]].forEach { close($0) }
            deathPipe.close()
            throw ProcessLaunchError.from(errno: EMFILE, program: program, doing: "creating a pipe")
        }
        // The read ends stay blocking (no fcntl per pipe): the loop reads a
        // pipe only when poll said it is readable or hung up, once per
        // report, so a read never waits. (Not O_NONBLOCK in pipe2 either:
        // the write ends would share it, and the child's stdout and stderr
        // must block.)
        let readEnds = [stdoutPipe[0], stderrPipe[0]]

        lock.withLock { spawnsInFlight += 1 }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        // ETXTBSY: a script written a moment ago (by a node, or by moon's
        // `write-file`) can still be open for writing in a child that another
        // thread is just spawning, until that child execs. It passes within
        // microseconds, so try again briefly instead of failing the node.
        // (The closures capture single fields: capturing `spec` copied it.)
        let workingDirectory = spec.workingDirectory
        let status: Int32 = withSpawnVectors(program: program, arguments: spec.arguments, environment: spec.processEnvironment) { argv, envp in
            path.withCString { path in
                withOptionalCString(workingDirectory) { directory in
                    var request = moon_spawn_request(
                        path: path, argv: argv, envp: envp, directory: directory,
                        stdin_fd: stdin, stdout_fd: stdoutPipe[1], stderr_fd: stderrPipe[1])
                    var status: Int32 = 0
                    for attempt in 0..<50 {
                        status = moon_spawn(&request, &pid, &pidfd)
                        guard status == ETXTBSY else { break }
                        usleep(useconds_t(min(attempt + 1, 10) * 1000))
                    }
                    return status
                }
            }
        }
        var diagnosis: Error?
        if status != 0 && ExecutableResolver.mayConcernThePath(status) {
            // Why? A missing or unusable directory or program gets a clear error.
            do {
                try ExecutableResolver.checkWorkingDirectory(spec)
                _ = try ExecutableResolver.resolve(spec)
            } catch {
                diagnosis = error
            }
        }
        close(stdoutPipe[1])
        close(stderrPipe[1])

        func abandon() {
            lock.withLock {
                spawnsInFlight -= 1
                lock.broadcast()
            }
            readEnds.forEach { close($0) }
            deathPipe.close()
        }

        guard status == 0 else {
            abandon()
            throw diagnosis ?? ProcessLaunchError.from(errno: status, program: program, doing: "exec")
        }
        // From here on, moon's death (even by SIGKILL) kills the group.
        deathPipe.arm(group: pid)
        guard pidfd >= 0 else {
            // Not expected: clone returns the pidfd with the pid.
            _ = Glibc.kill(-pid, SIGKILL)
            var ignored: Int32 = 0
            while waitpid(pid, &ignored, 0) < 0 && errno == EINTR {}
            abandon()
            throw ProcessLaunchError.from(errno: EBADF, program: program, doing: "watching the process")
        }

        let process = LaunchedProcess(pid: pid, program: program, launcher: self, onOutput: onOutput, onExit: onExit)
        process.deathPipe = deathPipe
        let pipes = [
            IOLoop.Pipe(fd: stdoutPipe[0], stream: .stdout, process: process),
            IOLoop.Pipe(fd: stderrPipe[0], stream: .stderr, process: process),
        ]
        process.pipes = pipes
        process.openPipes = pipes.count
        lock.withLock {
            live[pid] = process
            spawnsInFlight -= 1
            lock.broadcast()
        }
        loop.add(pipes.map { IOLoop.Watch(fd: $0.fd, kind: .pipe($0)) } + [IOLoop.Watch(fd: pidfd, kind: .exit(process))])
        return process
    }

    /// Descriptors a spawn leaves free for the rest of moon (see `launchOnce`).
    static let descriptorReserve: Int32 = 8

    /// Whether, with `highest` the highest descriptor just made, the
    /// pidfd and `descriptorReserve` more still fit under the limit. The
    /// limit is read again only when it seems reached (it may have been
    /// raised).
    private func hasReserve(after highest: Int32) -> Bool {
        func fits(_ limit: Int32) -> Bool { highest &+ 1 &+ Self.descriptorReserve < limit }
        if fits(lock.withLock({ descriptorLimit })) { return true }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return true }
        let current = Int32(clamping: limit.rlim_cur)
        lock.withLock { descriptorLimit = current }
        return fits(current)
    }

    /// `/dev/null`, opened once (`O_CLOEXEC`) and kept: every child gets it
    /// as stdin (an open in each child was one more path lookup per spawn).
    private func devNullDescriptor(program: String) throws -> Int32 {
        try lock.withLock {
            if devNull >= 0 { return devNull }
            var fd: Int32
            repeat {
                fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            } while fd < 0 && errno == EINTR
            guard fd >= 0 else {
                throw ProcessLaunchError.from(errno: errno, program: program, doing: "opening /dev/null")
            }
            devNull = fd
            return fd
        }
    }

    /// The file to spawn for `spec`: a name with a slash as it is (checked
    /// only if the spawn fails), a bare name as found in PATH. (moon itself
    /// hands over absolute paths: MoonRun's `ProgramCache` searches PATH
    /// once per program, not once per node.)
    private func programPath(_ spec: ProcessSpec) throws -> String {
        let name = spec.executable
        if name.utf8.contains(UInt8(ascii: "/")) { return ExecutableResolver.absolute(name, in: spec.workingDirectory) }
        return try ExecutableResolver.resolve(spec)
    }

    /// moon's event loop: the launcher's thread, started if need be. Throws
    /// `ProcessLaunchError` if it cannot start (no descriptor for its pipe).
    public func eventLoop() throws -> EventLoop {
        EventLoop(loop: try startedLoop(program: "moon"))
    }

    /// moon's event loop on the calling thread, which then runs it with
    /// `EventLoop.run(until:)`; nil when the loop already runs on a thread
    /// of its own. `moon run` does this on its main thread, which otherwise
    /// only waited for the run to end: the first node starts without
    /// waiting for a new thread to be scheduled (on a virtual machine whose
    /// idle CPU must be woken, 0.5-1.5 ms), and the run's end reaches the
    /// main thread without a wake-up. Throws as `eventLoop()` does.
    public func adoptEventLoop() throws -> EventLoop? {
        var adopted = false
        let loop = try startedLoop(program: "moon") { loop in
            loop.adoptCurrentThread()
            adopted = true
        }
        return adopted ? EventLoop(loop: loop) : nil
    }

    /// Starts the loop if need be: on a thread of its own, or, the first
    /// time, as `start` decides (`adoptEventLoop`).
    private func startedLoop(program: String, start: ((IOLoop) -> Void)? = nil) throws -> IOLoop {
        try lock.withLock {
            if let ioLoop { return ioLoop }
            do {
                let loop = try IOLoop(lock: lock, reap: { [unowned self] process in reap(process) },
                                      completed: { [unowned self] loop in childCompleted(on: loop) })
                if let start { start(loop) } else { loop.start() }
                ioLoop = loop
                return loop
            } catch let error as POSIXError {
                throw ProcessLaunchError.from(errno: error.code.rawValue, program: program, doing: "starting the launcher")
            }
        }
    }

    /// Called on the loop's thread when `process`'s pidfd is readable: kills
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
            if let pair = process.deathPipe {
                // Its group is dead: the pair can serve the next child.
                if spareDeathPipes.count < Self.spareDeathPipeLimit {
                    spareDeathPipes.append(pair)
                } else {
                    pair.close()
                }
            }
            process.deathPipe = nil
            live[pid] = nil
            reapGeneration &+= 1
            lock.broadcast()
            if isSubreaper { reapGroupLocked(pid) }
            return result == pid ? Termination(waitStatus: status) : .exited(-1)
        }
    }

    // MARK: Shutdown and orphans

    /// SIGKILLs every child's group that is still running, and, after
    /// `becomeSubreaper()`, every process that left its node's group, with
    /// its descendants: for moon's own shutdown. Call it from ordinary code,
    /// not from an async-signal handler: it takes a lock. Completion
    /// callbacks still follow as the children are reaped.
    ///
    /// An orphan (a process that left its node's group with `setsid` or
    /// `setpgid`, or a daemon's child) is re-parented to moon, and when it
    /// dies its own children are too: so this kills each orphan and the
    /// group it leads, reaps them, and looks at moon's children again, until
    /// none is left. Each turn takes one generation of the tree; a process
    /// that does not die within `orphanKillLimit` (stuck in the kernel) is
    /// left to the periodic sweep.
    public func killAll() {
        lock.withLock {
            for (pid, process) in live where !process.isReaped {
                process.killSent = true
                _ = Glibc.kill(-pid, SIGKILL)
            }
            guard isSubreaper else { return }
            let deadline = LinuxCalls.monotonicNanoseconds() + Self.orphanKillLimit
            // A child being spawned is not registered yet: it is no orphan.
            while spawnsInFlight > 0 && LinuxCalls.monotonicNanoseconds() < deadline {
                lock.wait(untilMonotonic: deadline)
            }
            while LinuxCalls.monotonicNanoseconds() < deadline {
                let orphans = orphansLocked()
                if orphans.isEmpty { return }
                for pid in orphans { killOrphanLocked(pid, SIGKILL) }
                // Reap what died; the survivors' turn comes again.
                for pid in orphans {
                    var status: Int32 = 0
                    while waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR {}
                }
                usleep(200)
            }
        }
    }

    /// How long `killAll` keeps killing generations of orphans.
    static let orphanKillLimit: UInt64 = 3_000_000_000

    /// moon's children that are not its nodes' main processes: orphans
    /// re-parented to it. Call with `lock` held (orphans are reaped under
    /// it, so none of these pids can be recycled before it is released).
    private func orphansLocked() -> [pid_t] {
        LinuxCalls.childPids().filter { live[$0] == nil }
    }

    /// Sends `signal` to the orphan `pid` and to the group it leads, if it
    /// leads one (it called `setsid` or `setpgid(0, 0)`: its descendants
    /// are there). Another group it joined is not signalled: it may be one
    /// of moon's own session that moon did not make. Call with `lock` held.
    private func killOrphanLocked(_ pid: pid_t, _ signal: Int32) {
        if getpgid(pid) == pid { _ = Glibc.kill(-pid, signal) }
        _ = Glibc.kill(pid, signal)
    }

    // MARK: Job control

    /// Ctrl-Z: stops every node (SIGSTOP to each child's group: a node
    /// runs in a group of its own, which the terminal's SIGTSTP does not
    /// reach) and the orphans, then moon itself; once moon is continued
    /// (`fg`, `bg`), continues them all. Call on the loop's thread.
    public func suspend() {
        signalEverything(SIGSTOP)
        _ = Glibc.kill(getpid(), SIGSTOP)
        resume()
    }

    /// SIGCONT to every node's group and orphan (after `suspend`, or when
    /// someone else stopped and continued moon).
    public func resume() {
        signalEverything(SIGCONT)
    }

    private func signalEverything(_ signal: Int32) {
        lock.withLock {
            for (pid, process) in live where !process.isReaped {
                _ = Glibc.kill(-pid, signal)
            }
            guard isSubreaper, spawnsInFlight == 0 else { return }
            for pid in orphansLocked() { killOrphanLocked(pid, signal) }
        }
    }

    /// Runs `action` on the loop's thread `nanoseconds` from now (for a
    /// child's grace period: no Dispatch timer, whose start may need a
    /// descriptor moon does not have).
    func post(afterNanoseconds nanoseconds: UInt64, _ action: @escaping () -> Void) {
        guard let loop = lock.withLock({ ioLoop }) else { return }
        let (deadline, overflow) = LinuxCalls.monotonicNanoseconds().addingReportingOverflow(nanoseconds)
        loop.post(atMonotonic: overflow ? UInt64.max : deadline, action)
    }

    /// Makes moon the reaper of its orphaned descendants
    /// (`prctl(PR_SET_CHILD_SUBREAPER)`) and reaps them on its event loop
    /// (see `sweepOrphansPeriodically`), since PID 1 here may not. After this
    /// the launcher reaps every child of the process: nothing else in moon
    /// may wait for its own children. Idempotent.
    public static func becomeSubreaper() throws {
        try shared.startSubreaping()
    }

    private func startSubreaping() throws {
        let alreadyOn: Bool = lock.withLock {
            defer { isSubreaper = true }
            return isSubreaper
        }
        if alreadyOn { return }
        guard LinuxCalls.becomeSubreaper() == 0 else {
            let code = errno
            lock.withLock { isSubreaper = false }
            throw ProcessLaunchError(kind: .systemError, program: "moon", errno: code,
                                     message: "cannot become a child subreaper: \(ProcessLaunchError.errorText(code))")
        }
        let loop = try startedLoop(program: "moon")
        sweepOrphansPeriodically(on: loop)
    }

    /// The members of a reaped child's group that were re-parented to moon
    /// are reaped with it (`reapGroupLocked`); other orphans (processes that
    /// left their node's group) every `orphanSweepInterval` on the loop: one
    /// `waitid` call when there is nothing to reap. (A thread blocked in
    /// `waitid(P_ALL)` would reap them at once, but it woke up for every
    /// child of moon's, a thread switch per node.)
    static let orphanSweepInterval: UInt64 = 200_000_000

    private func sweepOrphansPeriodically(on loop: IOLoop) {
        loop.post(atMonotonic: LinuxCalls.monotonicNanoseconds() + Self.orphanSweepInterval) { [self] in
            lock.withLock { reapOrphansLocked() }
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
    private func reapGroupLocked(_ group: pid_t) {
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
    /// the next sweep looks again) or while another thread is spawning (the zombie
    /// may be that child, not yet registered). Call with `lock` held.
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

/// Calls `body` with NULL-terminated `argv` (`program`, then `arguments`)
/// and `envp` arrays: the arguments in one allocation (a `strdup` each was a
/// visible part of a spawn), the environment as `ProcessEnvironment.withEnvp`
/// builds it.
private func withSpawnVectors<R>(
    program: String, arguments: [String], environment: ProcessEnvironment,
    _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>, UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
) -> R {
    var size = program.utf8.count + 1
    for argument in arguments { size += argument.utf8.count + 1 }
    let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 2)
    defer { pointers.deallocate() }
    let bytes = UnsafeMutablePointer<CChar>.allocate(capacity: size)
    defer { bytes.deallocate() }
    pointers[0] = bytes
    var cursor = CStringWriter.put(program, at: bytes)
    for (index, argument) in arguments.enumerated() {
        pointers[index + 1] = cursor
        cursor = CStringWriter.put(argument, at: cursor)
    }
    pointers[arguments.count + 1] = nil
    return environment.withEnvp { envp in body(pointers, envp) }
}

/// `body` with `text` as a C string, or with nil.
private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
