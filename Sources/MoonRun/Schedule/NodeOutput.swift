import MoonEvents

/// What a node's command sends with `next`: output lines, values, and — just
/// before it completes — how its process ended.
public enum NodeOutput: Sendable {
    case line(OutputStream, String, continued: Bool)
    /// The end of a line still being written (no newline yet), for the live
    /// view; the line comes whole later as `line`.
    case partial(OutputStream, String)
    case value(String)
    case exited(code: Int32)
    /// The node's outputs (`$MOON_OUTPUT`, or a built-in's `value`), sent once, just before it completes.
    case outputs([KeyValue])
    /// The Slurm job id of a node on a Slurm queue, as soon as srun prints it.
    case job(String)
    /// The process could not start yet for want of descriptors or processes
    /// (true: it waits for another to end), and then did start (false).
    case waiting(Bool)
}
