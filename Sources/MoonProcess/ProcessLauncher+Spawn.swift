import CMoonSpawn
import Glibc
import MoonSystem

/// Spawning one child: its descriptors, the spawn itself, and its
/// registration with the launcher and the event loop.
extension ProcessLauncher {
    /// A child's stdout and stderr pipes, both ends of each.
    struct OutputPipes {
        let stdout: (read: Int32, write: Int32)
        let stderr: (read: Int32, write: Int32)

        func closeWriteEnds() {
            close(stdout.write)
            close(stderr.write)
        }

        func closeAll() {
            closeWriteEnds()
            close(stdout.read)
            close(stderr.read)
        }
    }

    func launchOnce(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit givenExit: @escaping @Sendable (Termination, ProcessUsage?) -> Void
    ) throws -> any ProcessHandle {
        var onExit = givenExit
        let program = spec.executable
        let monitor = try startedMonitor(program: program)
        // Nothing is checked up front: the spawn finds out, and only when it
        // fails are the directory and the program examined, for a clear
        // message.
        let path = try programPath(spec)
        // An interactive node reads moon's stdin (when moon has one open,
        // and it is not a terminal moon cannot lend: a reader in the
        // background would be stopped by SIGTTIN); every other child /dev/null.
        let lendsStdin = spec.terminal.map { $0.foreground != nil || (fcntl(0, F_GETFD) >= 0 && isatty(0) == 0) } ?? false
        let stdin = lendsStdin ? 0 : try devNullDescriptor(program: program)
        // The screen the child draws on: moon's stdout, when it is lent and a terminal.
        let screen: Int32? = spec.terminal?.output == true && isatty(1) == 1 ? 1 : nil
        let restore = spec.terminal?.foreground.map { TerminalRestore(fd: $0, screen: screen) }
        if let restore {
            onExit = { termination, usage in
                restore.restore(after: termination)
                givenExit(termination, usage)
            }
        }
        let deathPipe = try takeDeathPipe(program: program)
        let pipes: OutputPipes
        do {
            pipes = try makeOutputPipes(program: program)
        } catch {
            deathPipe.close()
            throw error
        }

        lock.withLock { _ in
            spawnsInFlight += 1
            hasSpawned = true
        }
        let made = spec.memoryCgroup ? cgroups.make() : nil
        var entered: Int32 = 0
        let spawned = spawn(spec, path: path, stdin: stdin, pipes: pipes, deathPipe: deathPipe, retryBusy: !monitor.loop.isCurrent,
                            cgroup: made, entered: &entered)
        let cgroup = made.flatMap { cgroups.spawned($0, entered: entered) }
        pipes.closeWriteEnds()
        let pid: pid_t
        let pidfd: Int32
        switch spawned {
        case .success(let child):
            (pid, pidfd) = child
        case .failure(let error):
            if let cgroup { _ = cgroups.finish(cgroup) }
            restore?.restore()
            lock.withLock { _ in spawnsInFlight -= 1 }
            close(pipes.stdout.read)
            close(pipes.stderr.read)
            deathPipe.close()
            throw failure(error.code, spec, onLoop: monitor.loop.isCurrent)
        }
        // The spawner armed the death pipe: moon's death (even by SIGKILL)
        // kills the group.

        let process = LaunchedProcess(pid: pid, program: program, launcher: self, loop: monitor.loop,
                                      onOutput: onOutput, onExit: onExit)
        process.deathPipe = deathPipe
        process.cgroup = cgroup
        lock.withLock { _ in
            live[pid] = process
            spawnsInFlight -= 1
        }
        monitor.watch(process, stdout: pipes.stdout.read, stderr: pipes.stderr.read, pidfd: pidfd)
        if let restore, let fd = spec.terminal?.foreground { watchForStop(pid: pid, fd: fd, restore: restore, loop: monitor.loop) }
        return process
    }

    /// The error for a spawn that failed with `code`: a missing or unusable
    /// directory or program gets a clear message. On the loop, a busy
    /// program (ETXTBSY: a script written a moment ago, still open for
    /// writing in a child another thread is spawning until it execs) is
    /// `.outOfResources`, so the caller retries it later through
    /// `waitForResources` instead of sleeping on the loop.
    private func failure(_ code: Int32, _ spec: ProcessSpec, onLoop: Bool) -> Error {
        if ExecutableResolver.mayConcernThePath(code) {
            do {
                try ExecutableResolver.checkWorkingDirectory(spec)
                _ = try ExecutableResolver.resolve(spec)
            } catch {
                return error
            }
        }
        var error = ProcessLaunchError.from(errno: code, program: spec.executable, doing: "exec")
        if code == ETXTBSY && onLoop { error.kind = .outOfResources }
        return error
    }

    /// Calls the spawner. Off the loop, a busy program (ETXTBSY, see
    /// `failure`) is tried again for about half a second: it passes within
    /// microseconds.
    private func spawn(_ spec: ProcessSpec, path: String, stdin: Int32, pipes: OutputPipes, deathPipe: DeathPipe, retryBusy: Bool,
                       cgroup: MemoryCgroups.Group?, entered: inout Int32) -> Result<(pid_t, Int32), ProcessLaunchErrno> {
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        // (The closures capture single fields: capturing `spec` copies it.)
        let workingDirectory = spec.workingDirectory
        // Moon's own stdout and stderr for an interactive child on the live
        // view: its pipes are then unused, their write ends closed at once.
        let ownOutput = spec.terminal?.output == true
        let foreground = spec.terminal?.foreground ?? -1
        let (cgroupTasks, home) = cgroup.map { ($0.tasks, cgroups.home) } ?? (-1, -1)
        var joined: Int32 = 0
        let status: Int32 = withSpawnVectors(program: spec.executable, arguments: spec.arguments, environment: spec.processEnvironment) { argv, envp in
            path.withCString { path in
                withOptionalCString(workingDirectory) { directory in
                    var request = moon_spawn_request(
                        path: path, argv: argv, envp: envp, directory: directory,
                        stdin_fd: stdin, stdout_fd: ownOutput ? 1 : pipes.stdout.write, stderr_fd: ownOutput ? 2 : pipes.stderr.write,
                        death_fds: (deathPipe.readEnd, deathPipe.writeEnd), foreground_fd: foreground,
                        cgroup_fd: cgroupTasks, home_fd: home, cgroup_entered: 0)
                    var status: Int32 = 0
                    for attempt in 0..<(retryBusy ? Self.busyRetryLimit : 1) {
                        status = moon_spawn(&request, &pid, &pidfd)
                        joined = request.cgroup_entered
                        guard status == ETXTBSY, retryBusy else { break }
                        usleep(useconds_t(Self.busyRetryDelay(attempt) / 1000))
                    }
                    return status
                }
            }
        }
        entered = joined
        return status == 0 ? .success((pid, pidfd)) : .failure(ProcessLaunchErrno(code: status))
    }

    /// `signal(number, SIG_IGN)` in moon; the spawner still starts every
    /// child with each signal at its default.
    public static func ignoreSignal(_ number: Int32) {
        signal(number, SIG_IGN)
    }

    /// How often a busy program is tried, and how long to wait before the
    /// next try (nanoseconds): 1 ms, growing to 10 ms.
    static let busyRetryLimit = 50
    static func busyRetryDelay(_ attempt: Int) -> UInt64 {
        UInt64(min(attempt + 1, 10)) * 1_000_000
    }

    /// A spare death pipe of a reaped child, or a new one.
    private func takeDeathPipe(program: String) throws -> DeathPipe {
        if let spare = lock.withLock({ _ in spareDeathPipes.popLast() }) { return spare }
        switch DeathPipe.make() {
        case .success(let pair): return pair
        case .failure(let failure):
            throw ProcessLaunchError.from(errno: failure.code, program: program, doing: "creating a pipe")
        }
    }

    /// Closes the spare death pipes; false when there were none.
    func releaseSpareDeathPipes() -> Bool {
        let spares: [DeathPipe] = lock.withLock { _ in
            defer { spareDeathPipes = [] }
            return spareDeathPipes
        }
        spares.forEach { $0.close() }
        return !spares.isEmpty
    }

    /// The child's stdout and stderr pipes (`O_CLOEXEC`). The read ends stay
    /// blocking: the loop reads a pipe only when poll said it is readable or
    /// hung up, once per report, so a read never waits. (Not O_NONBLOCK in
    /// pipe2 either: the write ends would share it, and the child's stdout
    /// and stderr must block.)
    private func makeOutputPipes(program: String) throws -> OutputPipes {
        var stdout: [Int32] = [-1, -1]
        var stderr: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&stdout, O_CLOEXEC) == 0 else {
            throw ProcessLaunchError.from(errno: errno, program: program, doing: "creating a pipe")
        }
        guard LinuxCalls.pipe2(&stderr, O_CLOEXEC) == 0 else {
            let code = errno
            close(stdout[0])
            close(stdout[1])
            throw ProcessLaunchError.from(errno: code, program: program, doing: "creating a pipe")
        }
        let pipes = OutputPipes(stdout: (stdout[0], stdout[1]), stderr: (stderr[0], stderr[1]))
        // Keep a reserve: the pidfd still comes, and moon's own code (the
        // state store, libdispatch's first worker, which crashes without a
        // descriptor for its epoll) must still find some when nodes have
        // taken the rest. Descriptors are numbered lowest-free first, so
        // the highest new one tells how many are left.
        guard hasReserve(after: max(stderr[0], stderr[1])) else {
            pipes.closeAll()
            throw ProcessLaunchError.from(errno: EMFILE, program: program, doing: "creating a pipe")
        }
        return pipes
    }

    /// Descriptors a spawn leaves free for the rest of moon (see `makeOutputPipes`).
    static let descriptorReserve: Int32 = 8

    /// Whether, with `highest` the highest descriptor just made, the
    /// pidfd and `descriptorReserve` more still fit under the limit. The
    /// limit is read again only when it seems reached (it may have been
    /// raised).
    private func hasReserve(after highest: Int32) -> Bool {
        func fits(_ limit: Int32) -> Bool { highest &+ 1 &+ Self.descriptorReserve < limit }
        if fits(lock.withLock({ _ in descriptorLimit })) { return true }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return true }
        let current = Int32(clamping: limit.rlim_cur)
        lock.withLock { _ in descriptorLimit = current }
        return fits(current)
    }

    /// `/dev/null`, opened once (`O_CLOEXEC`) and kept: every child gets it
    /// as stdin.
    private func devNullDescriptor(program: String) throws -> Int32 {
        try lock.withLock { _ in
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
}

/// Calls `body` with NULL-terminated `argv` (`program`, then `arguments`)
/// and `envp` arrays: the arguments in one allocation, the environment as
/// `ProcessEnvironment.withEnvp` builds it.
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
