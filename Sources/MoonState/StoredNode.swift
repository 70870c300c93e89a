import Foundation

/// What the store keeps of a node's last successful run.
public struct StoredNode: Sendable {
    public var fingerprint: NodeFingerprint
    public var outputs: [(String, String)]
    public var values: [String]
    public var updatedAt: Date
    /// For a node with a `depfile`, the files it listed after this success
    /// (relative to the graph file's directory); nil when it was not read.
    public var deps: [String]? { listed.map(StateStore.decodePaths) }
    /// `deps` as stored, each path ended by a NUL byte: decoded only when
    /// asked, as the check by stats compares it with the manifest in place.
    public var listed: Data?
    /// The node's patterns when its sources digest was taken
    /// (`IncrementalState.patternsKey`); nil when not known (a row an
    /// older moon wrote). With the same patterns and every file's stat
    /// unchanged, the digest stands without being taken again.
    public var patterns: Data?
    /// The node's `CheckStamp` at this success (nil: a record an older moon
    /// wrote). With the same stamp, and each file's stat as its manifest
    /// has it, the node is up to date with no digest taken.
    public var stamp: CheckStamp?

    /// Whether `listed` names exactly the paths of `entries` from `start` on, in order (compared in place).
    func lists(_ entries: [Manifest.Entry], from start: Int) -> Bool {
        guard let listed else { return false }
        return listed.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            var at = 0
            for i in start..<entries.count {
                var path = entries[i].path
                let same = path.withUTF8 { utf8 -> Bool in
                    guard at + utf8.count < raw.count, raw[at + utf8.count] == 0 else { return false }
                    guard utf8.count == 0 || memcmp(raw.baseAddress! + at, utf8.baseAddress!, utf8.count) == 0 else { return false }
                    at += utf8.count + 1
                    return true
                }
                if !same { return false }
            }
            return at == raw.count
        }
    }

    /// The node started after this success and has not succeeded since (`markUnfinished`).
    public var unfinished: Bool { fingerprint.combined == ContentHash.zero }

    public init(fingerprint: NodeFingerprint, outputs: [(String, String)], values: [String], updatedAt: Date, deps: [String]? = nil,
                patterns: Data? = nil, stamp: CheckStamp? = nil) {
        self.init(fingerprint: fingerprint, outputs: outputs, values: values, updatedAt: updatedAt, listed: deps.map(StateStore.encodePaths),
                  patterns: patterns, stamp: stamp)
    }

    init(fingerprint: NodeFingerprint, outputs: [(String, String)], values: [String], updatedAt: Date, listed: Data?,
         patterns: Data?, stamp: CheckStamp?) {
        self.fingerprint = fingerprint
        self.stamp = stamp
        self.listed = listed
        self.patterns = patterns
        self.outputs = outputs
        self.values = values
        self.updatedAt = updatedAt
    }
}
