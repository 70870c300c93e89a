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

    /// The node started after this success and has not succeeded since (`markUnfinished`).
    public var unfinished: Bool { fingerprint.combined == ContentHash.zero }

    public init(fingerprint: NodeFingerprint, outputs: [(String, String)], values: [String], updatedAt: Date, deps: [String]? = nil) {
        self.fingerprint = fingerprint
        self.deps = deps
        self.outputs = outputs
        self.values = values
        self.updatedAt = updatedAt
    }
}
