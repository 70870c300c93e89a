/// How far a graph may grow after its YAML is loaded. The YAML loader
/// bounds the file itself; what includes and vars make of it can still
/// grow exponentially (a file included twice by each of 40 files, a var
/// that reads the previous var twice). Each bound is far beyond a real
/// project and is checked while growing, so such a file stops at once.
public enum ExpansionLimit {
    /// Included files read for one graph, a file counting each time it is included.
    public static let includedFiles = 1_000
    /// Nodes of the graph once includes are merged (before fan-out, which `FanOutLimit` bounds).
    public static let nodes = 1_000_000
    /// Bytes of one var's value once the vars it reads are substituted.
    public static let varBytes = 1 << 20
    /// Items of one list var once the list vars it reads are spliced in.
    public static let varItems = 100_000
    /// Bytes of every var's substituted value together, in the graph and its includes.
    public static let allVarBytes = 64 << 20
    /// Bytes of one string made by substitution as a node starts (an exec
    /// argument, an `env` or `with:` value): a long var read many times
    /// must not build gigabytes. The system refuses far less at exec.
    public static let substitutedBytes = 16 << 20
}
