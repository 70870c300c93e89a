/// Where a `next` line came from: a process stream, or a value a command sent.
public enum OutputStream: String, Sendable {
    case stdout, stderr, value
}
