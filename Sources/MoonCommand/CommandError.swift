/// Errors a ``Command`` raises itself, as opposed to errors of its `run`.
public enum CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command was asked to execute while not enabled (its `enabledIf`
    /// is false, or it is executing without `allowsConcurrentExecution`).
    /// Nothing ran.
    case disabled
    /// The execution was canceled: through the cancelable `execute`
    /// returned, or (in the command's `events`) by disposal.
    case canceled
    /// The command was released while the execution was in flight (or
    /// before it started); its work was canceled.
    case released
    /// Neither `run` was overridden nor an execute block given.
    case notImplemented

    public var description: String {
        switch self {
        case .disabled: return "command is not enabled"
        case .canceled: return "command was canceled"
        case .released: return "command was released while executing"
        case .notImplemented: return "command has neither a run override nor an execute block"
        }
    }
}
