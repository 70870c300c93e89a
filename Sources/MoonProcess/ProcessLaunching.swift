import Glibc

/// Starts child processes. The runner depends on this protocol only, so its
/// tests can use a fake; `ProcessLauncher` is the real one.
///
/// Callback contract (for every implementation):
/// - `onOutput` is called once per line (or line part), in the order the
///   child wrote them per stream; stdout and stderr lines interleave in the
///   order the launcher read them. Between them, lines marked `partial` may
///   come: the end of a line still being written, whose bytes come again in
///   the line (for a live view; ignore them to see every byte once).
/// - `onExit` is called exactly once, after the last `onOutput` of that
///   process, with how the main process ended.
/// - Callbacks of one process are serial, never concurrent. They run on the
///   launcher's own thread (the `EventLoop`), which serves every process:
///   hop to your own queue, or post to the loop, and return quickly; never
///   block or wait for another process's
///   events inside them. Calling `launch`, `terminate`, `kill` or `killAll`
///   from a callback is fine.
public protocol ProcessLaunching: Sendable {
    /// Starts `spec` in a new process group. Throws `ProcessLaunchError` if
    /// it cannot start; then no callback is ever called.
    func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> any ProcessHandle

    /// After `launch` threw `.outOfResources`: whether the caller may wait
    /// for a child to end instead of failing (see
    /// `ProcessLauncher.waitForResources`). Default: false, fail at once.
    func waitForResources(_ retry: @escaping (_ giveUp: Bool) -> Bool) -> Bool

    /// `launch`, whose `onExitWithUsage` also gets what the child's process
    /// tree used (`ProcessUsage`): nil when the launcher does not measure it
    /// (the default, which forwards to `launch`).
    func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExitWithUsage: @escaping @Sendable (Termination, ProcessUsage?) -> Void
    ) throws -> any ProcessHandle
}

extension ProcessLaunching {
    public func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExitWithUsage: @escaping @Sendable (Termination, ProcessUsage?) -> Void
    ) throws -> any ProcessHandle {
        try launch(spec, onOutput: onOutput, onExit: { onExitWithUsage($0, nil) })
    }

    public func waitForResources(_ retry: @escaping (_ giveUp: Bool) -> Bool) -> Bool { false }
}

/// A started child. Every method is idempotent, thread-safe, and a no-op once
/// the child has been reaped (its group was SIGKILLed at that point anyway).
public protocol ProcessHandle: AnyObject, Sendable {
    /// The child's pid, which is also its process group id.
    var pid: pid_t { get }
    /// SIGTERM to the child's group now, SIGKILL to the group after `grace`
    /// unless the child has exited by then. A grace of zero kills at once.
    func terminate(grace: Duration)
    /// SIGKILL to the child's group at once.
    func kill()
}
