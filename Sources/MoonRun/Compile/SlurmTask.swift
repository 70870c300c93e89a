import Glibc
import MoonProcess
import MoonSystem

/// The task moon runs on a Slurm compute node: the node's command under a
/// small reporter, moon's own binary (`moon --slurm-task FILE -- ARGV…`),
/// which runs the command as its child, waits for it, writes what it used
/// (`wait4`'s `rusage`) to FILE and ends as the command did (its exit code,
/// or the same signal). srun's own usage is that of the client on moon's
/// host, not the task's; the cluster's accounting (`sacct`) needs slurmdbd,
/// which many clusters, and the test cluster, do not run.
///
/// The figures travel in a file only the reporter writes, in the run's
/// output directory (which the compute nodes must see, as for
/// `$MOON_OUTPUT`); the node's output is never read for them, so nothing the
/// node prints can forge its usage. The file's path is in no variable of the
/// node's. Where the compute node has no file at moon's path of the same
/// size and modification time (moon is not on shared storage, or another
/// version is installed there), a shell runs the command directly
/// (`srunCommand`): the node runs as before and reports no usage.
public enum SlurmTask {
    /// moon's first argument that makes it the reporter; not a subcommand
    /// and no option of `moon run`, so no graph or node name can mean it.
    public static let flag = "--slurm-task"

    /// moon's own binary as the reporter: its path and what tells the same
    /// file on a compute node (`size:mtime`, as `stat -c %s:%Y` prints it).
    public struct Reporter: Sendable, Equatable {
        public var path: String
        public var identity: String

        public init(path: String, identity: String) {
            self.path = path
            self.identity = identity
        }

        /// The running moon's binary; nil when it cannot be named (deleted, replaced since it started).
        public static func ownBinary() -> Reporter? {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return Reporter(path: path, identity: "\(info.st_size):\(info.st_mtim.tv_sec)")
        }
    }

    /// The words srun runs: the reporter when the compute node has the
    /// same file at its path (GNU or BusyBox `stat`), else `command` itself.
    public static func srunCommand(reporter: Reporter, usageFile: String, command: [String]) -> [String] {
        ["/bin/sh", "-c", script, "sh", reporter.path, reporter.identity, flag, usageFile, "--"] + command
    }

    static let script = #"if [ "$(stat -L -c %s:%Y -- "$1" 2>/dev/null)" = "$2" ]; then m=$1; shift 2; exec "$m" "$@"; fi; shift 5; exec "$@""#

    // MARK: - The usage file

    /// The file's one line: a tag and version, then user and system CPU in
    /// microseconds and the peak resident memory in bytes.
    static let tag = "moon-slurm-usage 1 "

    static func encode(_ usage: ProcessUsage) -> String {
        tag + "\(usage.userMicroseconds) \(usage.systemMicroseconds) \(usage.maxResidentBytes)\n"
    }

    /// The usage in `text`, or nil unless it is exactly one well-formed line
    /// of three non-negative numbers of at most 18 digits.
    static func decode(_ text: String) -> ProcessUsage? {
        guard text.hasPrefix(tag), text.hasSuffix("\n") else { return nil }
        let fields = text.dropFirst(tag.count).dropLast().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3 else { return nil }
        let numbers = fields.compactMap { field -> Int64? in
            guard (1...18).contains(field.count), field.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(field)
        }
        guard numbers.count == 3 else { return nil }
        return ProcessUsage(userMicroseconds: numbers[0], systemMicroseconds: numbers[1], maxResidentBytes: numbers[2])
    }

    /// Reads and removes the usage file an attempt's reporter wrote: nil
    /// when there is none (moon's binary was not on the compute node, the
    /// task was killed) or it is not a small regular file holding one line.
    static func take(_ path: String) -> ProcessUsage? {
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size < 128 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return decode(String(decoding: buffer[0..<count], as: UTF8.self))
    }

    // MARK: - The reporter

    /// `moon --slurm-task FILE -- ARGV…` (`arguments` without moon's
    /// `argv[0]`). Called first thing in `main`, before moon changes any
    /// signal disposition or variable the command would inherit.
    public static func main(_ arguments: [String]) -> Never {
        guard arguments.count >= 4, arguments[0] == flag, arguments[2] == "--" else {
            fail("usage: moon \(flag) USAGE-FILE -- COMMAND [ARGUMENT...] (run by moon on a Slurm compute node)", code: 2)
        }
        let file = arguments[1]
        let command = Array(arguments[3...])
        // Orphans of the command re-parent to the reporter, which reaps them and counts what they used.
        _ = LinuxCalls.becomeSubreaper()
        forwardSignals()
        let child = spawn(command)
        var usage = ProcessUsage()
        var status: Int32 = 0
        while true {
            var measured = rusage()
            var waited: Int32 = 0
            let pid = wait4(-1, &waited, 0, &measured)
            if pid < 0 {
                if errno == EINTR { continue }
                break
            }
            usage.add(measured)
            if pid == child {
                status = waited
                break
            }
        }
        write(usage, to: file)
        end(like: status)
    }

    /// The command's pid, for the signal handler (0 until it is spawned).
    nonisolated(unsafe) private static var child: pid_t = 0

    /// Signals for the command reach it: Slurm signals every process of the
    /// step (srun cancelled, `scancel`), so a signal from slurmstepd (the
    /// reporter's parent) already reached the command and is not sent twice;
    /// any other sender's signal is passed on. The handlers are reset to
    /// their defaults in the command, which execs.
    private static func forwardSignals() {
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM] {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signal, info, _ in
                let child = SlurmTask.child
                guard child > 0 else { return }
                if let info, info.pointee._sifields._kill.si_pid == getppid() { return }
                kill(child, signal)
            }
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// Starts `command` (searched on PATH) with the reporter's environment,
    /// descriptors and signal mask; on failure, ends as a shell would (126, 127).
    private static func spawn(_ command: [String]) -> pid_t {
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, command[0], nil, nil, &argv, environ)
        guard result == 0 else {
            fail("moon: cannot run \(command[0]) on the compute node: \(String(cString: strerror(result)))",
                 code: result == ENOENT ? 127 : 126)
        }
        child = pid
        return pid
    }

    /// Writes the usage line; a file that cannot be written leaves the node without usage, never fails it.
    private static func write(_ usage: ProcessUsage, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let line = Array(encode(usage).utf8)
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Ends with the command's exit code, or by its signal (without a second
    /// core dump), so slurmstepd reports the command's own wait status.
    private static func end(like status: Int32) -> Never {
        let signal = status & 0x7f
        guard signal != 0 else { exit((status >> 8) & 0xff) }
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &none)
        Glibc.signal(signal, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        kill(getpid(), signal)
        exit(128 + signal)
    }

    private static func fail(_ message: String, code: Int32) -> Never {
        let line = Array((message + "\n").utf8)
        _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        exit(code)
    }
}
