/// What one graph load has expanded so far, against `ExpansionLimit`:
/// shared by the graph file and every file it includes, so that the
/// bounds hold for the whole graph and not once per file.
final class ExpansionBudget {
    /// The bounds: `ExpansionLimit`'s, or smaller ones for tests.
    let maxIncludedFiles: Int
    let maxNodes: Int

    var includedFiles = 0
    var nodes = 0
    var varBytes = 0
    /// Set once a bound is passed: later includes (or vars) are skipped
    /// without another error, since the first one says what to fix.
    var includesExhausted = false
    var varsExhausted = false

    init(maxIncludedFiles: Int = ExpansionLimit.includedFiles, maxNodes: Int = ExpansionLimit.nodes) {
        self.maxIncludedFiles = maxIncludedFiles
        self.maxNodes = maxNodes
    }
}
