import MoonSystem

/// Why a node (or one attempt of it) failed. A failed node is data, carried
/// by an `error` event, not an exception.
public struct NodeError: Error, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The process exited with a non-zero code.
        case exit
        /// The process was killed by a signal it did not get from moon.
        case signal
        /// The attempt ran longer than its `timeout`.
        case timeout
        /// The process could not be started (no such program, missing dir, no fds).
        case spawn
        /// A built-in command failed.
        case builtin
        /// moon cancelled it: Ctrl-C, fail-fast, or the run's `--timeout`.
        case canceled
        /// Its `for-each` value from a need is not a JSON list of strings.
        case fanOut = "fan-out"
    }

    public var kind: Kind
    public var message: String
    public var exitCode: Int32?
    public var signal: Int32?
    /// How many of the attempt's processes the kernel's OOM killer killed,
    /// as the node's own memory cgroup counted them; nil when it had none
    /// (the verdict then falls back to the system's count). Not encoded.
    public var memoryKills: Int?

    public init(_ kind: Kind, _ message: String, exitCode: Int32? = nil, signal: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.exitCode = exitCode
        self.signal = signal
    }

    /// Short form for a status line: "exit 1", "SIGKILL", "timeout".
    public var summary: String {
        switch kind {
        case .exit: return "exit \(exitCode ?? 1)"
        case .signal: return signal.map(signalName) ?? "signal"
        case .timeout: return "timeout"
        case .spawn: return "could not start"
        case .builtin: return "failed"
        case .canceled: return "canceled"
        case .fanOut: return "bad for-each value"
        }
    }
}
