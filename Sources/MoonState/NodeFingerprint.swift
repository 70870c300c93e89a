import Foundation

/// What decides whether a node is up to date, in parts so that `moon status`
/// can say which part changed: the command (text or argv, shell, working
/// directory, and for a built-in its name and arguments), the environment
/// from the file (graph and node `env`, dotenv values, vars), the outputs,
/// values and results of its needs, and its sources (the patterns, then each
/// file's path and content hash). `combined` hashes the four.
public struct NodeFingerprint: Sendable, Equatable {
    public var command: ContentHash
    public var environment: ContentHash
    public var needs: ContentHash
    public var sources: ContentHash
    /// The source files and their hashes, for reporting what changed.
    public var manifest: Manifest
    public var combined: ContentHash

    public init(command: ContentHash, environment: ContentHash, needs: ContentHash, sources: ContentHash,
                manifest: Manifest, combined: ContentHash) {
        self.command = command
        self.environment = environment
        self.needs = needs
        self.sources = sources
        self.manifest = manifest
        self.combined = combined
    }

    init(command: ContentHash, environment: ContentHash, needs: ContentHash, sources: ContentHash, manifest: Manifest) {
        var all = DigestBuilder("moon-fingerprint-1")
        for part in [command, environment, needs, sources] { all.add(part) }
        self.init(command: command, environment: environment, needs: needs, sources: sources, manifest: manifest,
                  combined: all.finish())
    }

    public static func == (a: NodeFingerprint, b: NodeFingerprint) -> Bool { a.combined == b.combined }
}

/// The source files of a node with their content hashes, sorted by path.
/// Stored as `path NUL hash(32 bytes)` records.
public struct Manifest: Sendable {
    public var files: [(path: String, hash: ContentHash)]

    public init(files: [(path: String, hash: ContentHash)]) {
        self.files = files
    }

    public init(encoded data: Data) {
        var files: [(String, ContentHash)] = []
        let bytes = [UInt8](data)
        var i = 0
        while i < bytes.count {
            guard let nul = bytes[i...].firstIndex(of: 0), nul + 33 <= bytes.count,
                  let hash = ContentHash(bytes: bytes[(nul + 1)..<(nul + 33)]) else { break }
            files.append((String(decoding: bytes[i..<nul], as: UTF8.self), hash))
            i = nul + 33
        }
        self.files = files
    }

    public var encoded: Data {
        var out: [UInt8] = []
        for file in files {
            out += Array(file.path.utf8)
            out.append(0)
            out += file.hash.bytes
        }
        return Data(out)
    }

    /// What differs from `old`: files whose content changed, new files, and files gone.
    public func changes(since old: Manifest) -> (changed: [String], added: [String], removed: [String]) {
        var before: [String: ContentHash] = [:]
        for file in old.files { before[file.path] = file.hash }
        var changed: [String] = [], added: [String] = []
        for file in files {
            if let hash = before.removeValue(forKey: file.path) {
                if hash != file.hash { changed.append(file.path) }
            } else {
                added.append(file.path)
            }
        }
        return (changed, added, before.keys.sorted())
    }
}
