import Glibc
import MoonSystem

/// How a child's main process ended. A non-zero exit is a result, not an
/// error: only a failure to start throws (`ProcessLaunchError`).
public enum Termination: Sendable, Hashable, CustomStringConvertible {
    /// `exit(code)`. The code is `-1` only if the status could not be
    /// collected because something else in moon reaped the child.
    case exited(Int32)
    /// Killed by a signal (`SIGKILL` after a cancellation's grace, say).
    case signaled(Int32)

    public var isSuccess: Bool { self == .exited(0) }

    /// Decodes a `waitpid` status word (the `WIFEXITED` family of macros,
    /// which Swift cannot import).
    init(waitStatus status: Int32) {
        let signal = status & 0x7f
        if signal == 0 {
            self = .exited((status >> 8) & 0xff)
        } else {
            self = .signaled(signal)
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exit \(code)"
        case .signaled(let signal): return "signal \(signal) (\(Termination.signalName(signal)))"
        }
    }

    /// `SIGKILL`, `SIGTERM`…: MoonSystem's `signalName`, which code that
    /// does not spawn uses without this module.
    public static func signalName(_ signal: Int32) -> String {
        MoonSystem.signalName(signal)
    }
}
