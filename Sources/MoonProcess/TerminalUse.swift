import Glibc
import MoonSystem

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
/// (killed by a signal, a full-screen program that left raw mode on); and,
/// when the child drew on it and did not exit 0, the screen modes a
/// full-screen program sets (`screenReset`).
final class TerminalRestore: @unchecked Sendable {
    private let fd: Int32
    /// Where the child drew (moon's stdout), when it was lent one.
    private let screen: Int32?
    private var modes = termios()
    private var hasModes = false

    init(fd: Int32, screen: Int32?) {
        self.fd = fd
        self.screen = screen
        save()
    }

    /// What a full-screen program (vim, less, htop) undoes on its way out,
    /// sent after one that may not have (docs/decisions.md): each is a no-op
    /// on a terminal not in that mode. The alternate screen is left by
    /// entering it and leaving it: a lone `?1049l` outside it still restores
    /// a cursor saved long before (xterm, tmux) and would move moon's view,
    /// while `?1049h` inside it changes nothing, so the pair leaves the
    /// alternate screen with the cursor where it was before the program, or
    /// does nothing. Then: the cursor shown, mouse reporting (1000, 1002,
    /// 1003, 1006, 1015), focus events (1004) and bracketed paste (2004)
    /// off, normal cursor keys (`?1l`) and keypad (`ESC >`), plain text
    /// (`SGR 0`). Not sent: a full reset (`ESC c`, it clears the screen), a
    /// scrolling region reset (it homes the cursor), and keyboard protocols
    /// (`CSI < u`, which an older terminal reads as restoring the cursor).
    static let screenReset = "\u{1B}[?1049h\u{1B}[?1049l\u{1B}[?25h"
        + "\u{1B}[?1000l\u{1B}[?1002l\u{1B}[?1003l\u{1B}[?1006l\u{1B}[?1015l\u{1B}[?1004l\u{1B}[?2004l"
        + "\u{1B}[?1l\u{1B}>\u{1B}[0m"

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
    /// and the modes are as before. After a child that ended other than by
    /// exit 0 (killed, timed out, ^C, crashed), the screen is reset too: a
    /// program that exits 0 restored its own, and the reset is then not sent.
    func restore(after termination: Termination? = nil) {
        withSIGTTOUBlocked {
            _ = tcsetpgrp(fd, getpgrp())
            if hasModes { _ = tcsetattr(fd, TCSADRAIN, &modes) }
            if let screen, let termination, !termination.isSuccess { LinuxCalls.writeAll(Self.screenReset, to: screen) }
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
