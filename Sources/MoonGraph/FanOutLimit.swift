/// The most instances one node fans out to, from a list, a glob, a matrix
/// or a need's output at run time. A few lines of matrix can ask for
/// millions of nodes, each costing memory and a place in every report; a
/// graph that needs more splits its fan-out between nodes.
public enum FanOutLimit {
    public static let instances = 100_000

    /// The error's second half, and the help that goes with it.
    public static let beyond = "a node fans out to at most \(instances) instances"
    static let help = "help: split the items between several nodes, or narrow them (a glob's 'exclude', a matrix's 'exclude')"
}
