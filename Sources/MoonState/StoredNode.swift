import Foundation

/// What the store keeps of a node's last successful run.
public struct StoredNode: Sendable {
    public var fingerprint: NodeFingerprint
    public var outputs: [(String, String)]
    public var values: [String]
    public var updatedAt: Date
    /// For a node with a `depfile`, the files it listed after this success
    /// (relative to the graph file's directory); nil when it was not read.
    public var deps: [String]?
    /// The node's patterns when its sources digest was taken
    /// (`IncrementalState.patternsKey`); nil when not known (a row an
    /// older moon wrote). With the same patterns and every file's stat
    /// unchanged, the digest stands without being taken again.
    public var patterns: Data?
    /// The node's `CheckStamp` at this success (nil: a record an older moon
    /// wrote). With the same stamp, and each file's stat as its manifest
    /// has it, the node is up to date with no digest taken.
    public var stamp: CheckStamp?

    /// The node started after this success and has not succeeded since (`markUnfinished`).
    public var unfinished: Bool { fingerprint.combined == ContentHash.zero }

    public init(fingerprint: NodeFingerprint, outputs: [(String, String)], values: [String], updatedAt: Date, deps: [String]? = nil,
                patterns: Data? = nil, stamp: CheckStamp? = nil) {
        self.fingerprint = fingerprint
        self.stamp = stamp
        self.deps = deps
        self.patterns = patterns
        self.outputs = outputs
        self.values = values
        self.updatedAt = updatedAt
    }
}
