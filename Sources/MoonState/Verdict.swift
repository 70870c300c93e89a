import Foundation


/// What a node's needs left it when it is about to start: the part of the
/// fingerprint that only exists at run time.
public struct NeedState: Sendable {
    public var name: String
    /// `success`, `failure`, `canceled` or `skipped`.
    public var result: String
    public var outputs: [(String, String)]
    public var values: [String]

    public init(name: String, result: String = "success", outputs: [(String, String)] = [], values: [String] = []) {
        self.name = name
        self.result = result
        self.outputs = outputs
        self.values = values
    }
}

/// Why a node with `sources` is not up to date.
public enum Staleness: Sendable, Equatable, CustomStringConvertible {
    case forced
    /// No store (missing, locked or corrupt): nothing is known.
    case noStore
    case neverRun
    /// It started after its last success and did not succeed (failed,
    /// timed out, cancelled, or moon was stopped or killed): its outputs
    /// may be half-written.
    case unfinished
    case commandChanged
    case environmentChanged
    case needsChanged
    /// The source files' content, or the patterns themselves, changed.
    case sourcesChanged(changed: [String], added: [String], removed: [String])
    /// Its depfile could not be read or parsed after its last success.
    case depfileUnread(String)
    /// A `generates` pattern matches nothing.
    case outputMissing(String)
    /// Its `sources` match files whose names are not UTF-8 (shown escaped):
    /// moon cannot hash them, so it never finds the node up to date.
    case unnamableSources([String])

    public var description: String {
        switch self {
        case .forced: return "forced (--force or --force-only)"
        case .noStore: return "no state store"
        case .neverRun: return "never run successfully"
        case .unfinished: return "its last run did not succeed"
        case .commandChanged: return "command changed"
        case .environmentChanged: return "environment changed"
        case .needsChanged: return "outputs of its needs changed"
        case .outputMissing(let pattern): return "output missing: \(pattern)"
        case .depfileUnread(let path): return "its depfile \(path) was not read after its last success"
        case .unnamableSources(let names):
            let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
            return "sources whose names are not UTF-8 cannot be tracked: \(shown)"
        case .sourcesChanged(let changed, let added, let removed):
            var parts: [String] = []
            func list(_ files: [String], _ verb: String) {
                guard !files.isEmpty else { return }
                let shown = files.prefix(3).joined(separator: ", ")
                parts.append(files.count > 3 ? "\(shown) and \(files.count - 3) more \(verb)" : "\(shown) \(verb)")
            }
            list(changed, "changed")
            list(added, "added")
            list(removed, "removed")
            return parts.isEmpty ? "sources patterns changed" : parts.joined(separator: "; ")
        }
    }
}

/// Whether a node can be skipped.
public enum Verdict: Sendable {
    /// The node has no `sources`: it always runs.
    case untracked
    /// Skip it; its last successful run left these outputs and values.
    case upToDate(outputs: [(String, String)], values: [String])
    case stale([Staleness])

    public var isUpToDate: Bool {
        if case .upToDate = self { return true }
        return false
    }
}
