/// How much a reporter shows (`-q`, default, `-v`).
public enum Verbosity: Sendable {
    /// Only failures (with their last lines of output) and the summary line.
    case quiet
    case normal
    /// Also each node's command as it starts.
    case verbose
}

/// How node output is laid out (`--output-mode`).
public enum NodeOutputMode: String, Sendable, CaseIterable {
    /// Each line as it arrives, prefixed with its node: `build │ text`.
    case prefixed
    /// Each node's output held back and printed together when the node ends,
    /// so the output of parallel nodes does not interleave.
    case grouped
}
