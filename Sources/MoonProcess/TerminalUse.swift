import Glibc

/// What an interactive child takes of moon's own standard descriptors
/// (docs/terminal.md): moon's stdin always; moon's stdout and stderr too
/// when the live view has stepped aside for it (else pipes, as for any
/// child); and the terminal's foreground, so that what is typed, ^C and
/// ^\\ reach the child's process group rather than moon's.
public struct TerminalUse: Sendable, Hashable {
    /// The child's stdout and stderr are moon's 1 and 2, not pipes moon reads.
    public var output: Bool
    /// A descriptor of moon's controlling terminal: the child's group is
    /// made its foreground group before the child execs, and moon's again,
    /// with the terminal's modes as they were, once the child is reaped.
    /// nil when moon has no terminal or is not its foreground group.
    public var foreground: Int32?

    public init(output: Bool, foreground: Int32?) {
        self.output = output
        self.foreground = foreground
    }

    /// `fd` when it is a terminal whose foreground group is moon's own (a
    /// `moon run &` in the background hands nothing over); else nil.
    public static func foregroundTerminal(_ fd: Int32 = 0) -> Int32? {
        guard isatty(fd) == 1 else { return nil }
        let group = tcgetpgrp(fd)
        return group > 0 && group == getpgrp() ? fd : nil
    }
}

/// The terminal's modes and foreground group as moon had them before a
/// child took it: restored when the child is reaped, however it ended
/// (killed by a signal, a full-screen program that left raw mode on).
final class TerminalRestore: @unchecked Sendable {
    private let fd: Int32
    private var modes = termios()
    private var hasModes = false

    init(fd: Int32) {
        self.fd = fd
        save()
    }

    /// Takes the terminal's modes as they are now (moon's, when it has it).
    func save() {
        hasModes = tcgetattr(fd, &modes) == 0
    }

    /// The child's group (`pid`, its leader's) is the foreground again, after a stop.
    func handOver(to pid: pid_t) {
        withSIGTTOUBlocked { _ = tcsetpgrp(fd, pid) }
    }

    /// moon's group is the foreground again (SIGTTOU, which a background
    /// group's `tcsetpgrp` raises, is ignored in moon: `Console.takeOverSignals`),
    /// and the modes are as before.
    func restore() {
        withSIGTTOUBlocked {
            _ = tcsetpgrp(fd, getpgrp())
            if hasModes { _ = tcsetattr(fd, TCSADRAIN, &modes) }
        }
    }

    /// `body` with SIGTTOU blocked on this thread, whatever moon's disposition of it.
    private func withSIGTTOUBlocked(_ body: () -> Void) {
        var block = sigset_t(), previous = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &block, &previous)
        body()
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
