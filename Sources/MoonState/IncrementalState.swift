import Foundation
import MoonGraph

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
    case commandChanged
    case environmentChanged
    case needsChanged
    /// The source files' content, or the patterns themselves, changed.
    case sourcesChanged(changed: [String], added: [String], removed: [String])
    /// A `generates` pattern matches nothing.
    case outputMissing(String)

    public var description: String {
        switch self {
        case .forced: return "forced (--force)"
        case .noStore: return "no state store"
        case .neverRun: return "never run successfully"
        case .commandChanged: return "command changed"
        case .environmentChanged: return "environment changed"
        case .needsChanged: return "outputs of its needs changed"
        case .outputMissing(let pattern): return "output missing: \(pattern)"
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

/// The up-to-date check of one run: fingerprints nodes just before they
/// would start, compares them with the store's last successful ones, and
/// remembers the fingerprints of the nodes that succeed (written by
/// `flush`, in one transaction, at the end of the run). A store that fails
/// while in use gives one warning and is then left alone: moon goes on,
/// running what it cannot prove up to date. Thread-safe.
public final class IncrementalState: @unchecked Sendable {
    public let graph: Graph
    public let force: Bool
    /// The graph file's name: one store serves every graph of a directory.
    public let graphKey: String
    private var store: StateStore?
    private let scanner: SourceScanner
    private let lock = NSLock()
    private var cache: StatCache?
    /// Per graph node: whether its state is worth keeping — it has
    /// `sources`, or a node that needs it has (`moon status` of that one
    /// reads its last outputs). The others are neither fingerprinted nor
    /// stored, so a graph without `sources` costs nothing here.
    private let tracked: [Bool]
    private var pending: [Int: NodeFingerprint] = [:]
    private var succeeded: [Int: StoredNode] = [:]
    private let onWarning: (String) -> Void

    public init(graph: Graph, store: StateStore?, force: Bool = false, onWarning: @escaping (String) -> Void = { _ in }) {
        self.graph = graph
        self.store = store
        self.force = force
        self.onWarning = onWarning
        self.graphKey = graph.path.split(separator: "/").last.map(String.init) ?? graph.path
        self.scanner = SourceScanner(root: graph.directory)
        var tracked = graph.nodes.map { !$0.sources.isEmpty }
        for node in graph.nodes where !node.sources.isEmpty {
            for need in node.needs { tracked[need] = true }
        }
        self.tracked = tracked
    }

    /// Files read and hashed, and files whose hash came from the stat cache, so far.
    public var statistics: (hashed: Int, reused: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (cache?.hashed ?? 0, cache?.reused ?? 0)
    }

    /// Time spent in `check` so far (walking, stat-ing, hashing, reading the store), in seconds.
    public var checkSeconds: Double {
        lock.lock()
        defer { lock.unlock() }
        return Double(checkNanoseconds) / 1e9
    }
    private var checkNanoseconds: Int64 = 0

    /// Decides whether graph node `index` is up to date, given what its needs left it.
    /// Whether `index` is fingerprinted (it has `sources`, or a node with
    /// sources needs it); `check` says `.untracked` for the others.
    public func isTracked(_ index: Int) -> Bool {
        tracked[index]
    }

    public func check(node index: Int, needs: [NeedState]) -> Verdict {
        guard tracked[index] else { return .untracked }
        lock.lock()
        defer { lock.unlock() }
        let started = FileStat.monotonicNanoseconds()
        defer { checkNanoseconds += FileStat.monotonicNanoseconds() - started }
        let node = graph.nodes[index]
        // The last success first: its manifest spares re-reading unchanged files.
        let stored = node.sources.isEmpty || store == nil ? nil : storedLocked(node.name)
        // Kept for `moon status` of its dependents too (hence `tracked`).
        let fingerprint = fingerprintLocked(index, needs: needs, previous: stored?.fingerprint.manifest)
        pending[index] = fingerprint
        guard !node.sources.isEmpty else { return .untracked }
        if force { return .stale([.forced]) }
        guard store != nil else { return .stale([.noStore]) }
        guard let stored else { return .stale([.neverRun]) }
        var reasons: [Staleness] = []
        let old = stored.fingerprint
        if old.command != fingerprint.command { reasons.append(.commandChanged) }
        if old.environment != fingerprint.environment { reasons.append(.environmentChanged) }
        if old.needs != fingerprint.needs { reasons.append(.needsChanged) }
        if old.sources != fingerprint.sources {
            let diff = fingerprint.manifest.changes(since: old.manifest)
            reasons.append(.sourcesChanged(changed: diff.changed, added: diff.added, removed: diff.removed))
        }
        if reasons.isEmpty, old.combined != fingerprint.combined { reasons.append(.commandChanged) }
        for pattern in node.generates where !scanner.exists(pattern) {
            reasons.append(.outputMissing(pattern))
        }
        return reasons.isEmpty ? .upToDate(outputs: stored.outputs, values: stored.values) : .stale(reasons)
    }

    /// What the store remembers of node `name`'s last success (nil without a store).
    public func stored(_ name: String) -> StoredNode? {
        lock.lock()
        defer { lock.unlock() }
        return storedLocked(name)
    }

    private func storedLocked(_ name: String) -> StoredNode? {
        guard let store else { return nil }
        do {
            return try store.nodeState(graph: graphKey, node: name)
        } catch {
            failed(error)
            return nil
        }
    }

    /// Graph node `index` succeeded with these outputs: remember its fingerprint.
    public func recordSuccess(node index: Int, outputs: [(String, String)], values: [String]) {
        lock.lock()
        defer { lock.unlock() }
        guard let fingerprint = pending.removeValue(forKey: index) else { return }
        succeeded[index] = StoredNode(fingerprint: fingerprint, outputs: outputs, values: values, updatedAt: Date())
    }

    /// Writes what this run learnt (fingerprints of nodes that succeeded, the
    /// stat cache) in one transaction.
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        guard let store else { return }
        let files = cache?.changed ?? [:]
        guard !files.isEmpty || !succeeded.isEmpty else { return }
        do {
            try store.saveNodeStates(graph: graphKey, succeeded.map { (graph.nodes[$0.key].name, $0.value) }, files: files)
            cache?.markSaved()
            succeeded = [:]
        } catch {
            failed(error)
        }
    }

    private func failed(_ error: Error) {
        onWarning("cannot use \(store?.path ?? "the state store") (\(store?.failureReason(error) ?? StateStore.reason(error))); running what it cannot prove up to date, remembering nothing")
        store = nil
    }

    // MARK: - Fingerprints

    /// The fingerprint of graph node `index` now.
    public func fingerprint(node index: Int, needs: [NeedState]) -> NodeFingerprint {
        lock.lock()
        defer { lock.unlock() }
        return fingerprintLocked(index, needs: needs, previous: nil)
    }

    private func fingerprintLocked(_ index: Int, needs: [NeedState], previous: Manifest?) -> NodeFingerprint {
        let node = graph.nodes[index]
        var command = DigestBuilder("command")
        switch node.action {
        case .shell(let script):
            command.add("shell")
            command.add(node.shell.rawValue)
            command.add(script)
        case .exec(let argv):
            command.add("exec")
            command.add(argv.count)
            for arg in argv { command.add(arg) }
        case .builtin(let name, let with):
            command.add("builtin")
            command.add(name)
            for key in with.keys.sorted() {
                command.add(key)
                command.add(with[key]!.text)
            }
        }
        command.add(graph.workingDirectory(for: node))

        var environment = DigestBuilder("environment")
        for (label, variables) in [("dotenv", graph.dotenvValues), ("env", graph.environment(for: node)), ("vars", graph.vars)] {
            environment.add(label)
            environment.add(variables.count)
            for entry in variables {
                environment.add(entry.name)
                environment.add(entry.value)
            }
        }

        var needsDigest = DigestBuilder("needs")
        needsDigest.add(needs.count)
        for need in needs {
            needsDigest.add(need.name)
            needsDigest.add(need.result)
            let outputs = need.outputs.sorted { $0.0 < $1.0 }
            needsDigest.add(outputs.count)
            for (key, value) in outputs {
                needsDigest.add(key)
                needsDigest.add(value)
            }
            needsDigest.add(need.values.count)
            for value in need.values { needsDigest.add(value) }
        }

        var sources = DigestBuilder("sources")
        var manifest: [Manifest.Entry] = []
        for (label, patterns) in [("sources", node.sources), ("generates", node.generates)] {
            sources.add(label)
            sources.add(patterns.count)
            for pattern in patterns { sources.add(pattern) }
        }
        if !node.sources.isEmpty {
            let cache = loadedCache()
            let files = scanner.files(matching: node.sources)
            manifest.reserveCapacity(files.count)
            sources.add(files.count)
            // The previous manifest, walked in step with the scan (same order
            // when nothing moved); a dictionary only once they disagree.
            let old = previous?.entries ?? []
            var j = 0
            var byPath: [String: Int]?
            for file in files {
                var candidate: Manifest.Entry?
                if j < old.count, old[j].path == file.path {
                    candidate = old[j]
                    j += 1
                } else if !old.isEmpty {
                    if byPath == nil {
                        var made: [String: Int] = [:]
                        made.reserveCapacity(old.count)
                        for (k, entry) in old.enumerated() { made[entry.path] = k }
                        byPath = made
                    }
                    candidate = byPath![file.path].map { old[$0] }
                }
                sources.add(file.path)
                if let c = candidate, c.stat == file.stat, !c.racy {
                    cache.countReused()
                    sources.add(c.hash)
                    manifest.append(c)
                } else if let entry = cache.hash(of: file, fullPath: scanner.fullPath(file.path)) {
                    sources.add(entry.hash)
                    manifest.append(Manifest.Entry(path: file.path, stat: entry.stat, racy: entry.racy, hash: entry.hash))
                } else {
                    sources.add("unreadable")
                }
            }
        }
        return NodeFingerprint(command: command.finish(), environment: environment.finish(), needs: needsDigest.finish(),
                               sources: sources.finish(), manifest: Manifest(entries: manifest))
    }

    /// The stat cache, whose table is read only when a manifest does not answer.
    private func loadedCache() -> StatCache {
        if let cache { return cache }
        let made = StatCache { [weak self] in
            guard let self, let store = self.store else { return [:] }
            do {
                return try store.loadFileCache()
            } catch {
                self.failed(error)
                return [:]
            }
        }
        cache = made
        return made
    }
}
