/// A problem found in a graph file (or on the command line), with the span it
/// is about. Every stage reports problems as diagnostics and collects them, so
/// the user sees every error in the file at once.
public struct Diagnostic: Error, Sendable, Hashable {
    public enum Severity: String, Sendable, Hashable {
        case error, warning, note
    }

    public var severity: Severity
    public var message: String
    /// nil when the problem is about the whole file and has no position.
    public var span: SourceSpan?
    /// Extra lines printed after the source excerpt, such as "help: ...".
    public var notes: [String]
    /// The node being read when the problem was found. Text a YAML anchor
    /// merges into many nodes is read once per node: the renderer shows the
    /// copies once, naming the nodes (`DiagnosticRenderer.merged`).
    public var node: String?

    public init(_ severity: Severity = .error, _ message: String, at span: SourceSpan?, notes: [String] = []) {
        self.severity = severity
        self.message = message
        self.span = span
        self.notes = notes
    }

    public static func error(_ message: String, at span: SourceSpan?, notes: [String] = []) -> Diagnostic {
        Diagnostic(.error, message, at: span, notes: notes)
    }
}

/// Several diagnostics thrown together, in source order.
public struct Diagnostics: Error, Sendable {
    public var items: [Diagnostic]
    public init(_ items: [Diagnostic]) { self.items = items }
}
