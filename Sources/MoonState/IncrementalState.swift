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

    public var description: String {
        switch self {
        case .forced: return "forced (--force)"
        case .noStore: return "no state store"
        case .neverRun: return "never run successfully"
        case .unfinished: return "its last run did not succeed"
        case .commandChanged: return "command changed"
        case .environmentChanged: return "environment changed"
        case .needsChanged: return "outputs of its needs changed"
        case .outputMissing(let pattern): return "output missing: \(pattern)"
        case .depfileUnread(let path): return "its depfile \(path) was not read after its last success"
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
    /// Fingerprints taken by `check`, until the node succeeds.
    private var pending: [Int: Pending] = [:]
    private struct Pending {
        var fingerprint: NodeFingerprint
        var depfile: PendingDepfile?
    }
    /// Nodes whose last success the store holds (seen by `check`): what
    /// `starting` has to forget.
    private var remembered = Set<Int>()
    private var succeeded: [Int: StoredNode] = [:]
    private let onWarning: (String) -> Void

    public init(graph: Graph, store: StateStore?, force: Bool = false, onWarning: @escaping (String) -> Void = { _ in }) {
        self.graph = graph
        self.store = store
        self.force = force
        self.onWarning = onWarning
        self.graphKey = StateStore.graphKey(forGraphAt: graph.path)
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
        if stored != nil { remembered.insert(index) }
        // Kept for `moon status` of its dependents too (hence `tracked`).
        let (fingerprint, depfile) = fingerprintLocked(index, needs: needs, previous: stored)
        pending[index] = Pending(fingerprint: fingerprint, depfile: depfile)
        guard !node.sources.isEmpty else { return .untracked }
        if force { return .stale([.forced]) }
        guard store != nil else { return .stale([.noStore]) }
        guard let stored else { return .stale([.neverRun]) }
        if stored.unfinished { return .stale([.unfinished]) }
        if let path = node.depfile, stored.deps == nil { return .stale([.depfileUnread(path)]) }
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
        guard reasons.isEmpty else { return .stale(reasons) }
        // Files that were racy at the last success and are settled now: keep
        // the settled manifest, so later checks need not load the stat cache.
        if stored.fingerprint.manifest.entries.contains(where: \.racy),
           fingerprint.manifest.entries.count == stored.fingerprint.manifest.entries.count,
           fingerprint.manifest.entries.filter(\.racy).count < stored.fingerprint.manifest.entries.filter(\.racy).count {
            succeeded[index] = StoredNode(fingerprint: fingerprint, outputs: stored.outputs, values: stored.values,
                                          updatedAt: stored.updatedAt, deps: stored.deps)
        }
        return .upToDate(outputs: stored.outputs, values: stored.values)
    }

    /// The source files (and depfile dependencies) `check` found for graph
    /// node `index`, relative to the graph file's directory.
    public func checkedSources(node index: Int) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return pending[index]?.fingerprint.manifest.entries.map(\.path) ?? []
    }

    /// What the store remembers of node `name`'s last success (nil without a store).
    public func stored(_ name: String) -> StoredNode? {
        lock.lock()
        defer { lock.unlock() }
        return storedLocked(name)
    }

    private func storedLocked(_ name: String) -> StoredNode? {
        guard let store else { return nil }
        if let all = allStored { return all[name] }
        do {
            // All of the graph's at the first question (one read, not one per node).
            let all = try store.nodeStates(graph: graphKey)
            allStored = all
            return all[name]
        } catch {
            failed(error)
            return nil
        }
    }

    /// The store's node states of this graph as the run began (read once).
    private var allStored: [String: StoredNode]?

    /// Stats of depfile dependencies (many nodes list the same headers),
    /// kept only while no node of this run has started: once one has, any
    /// file may change, and each check stats afresh.
    private var dependencyStats: [String: (FileStat, FileStat.Kind)?]? = [:]

    private func dependencyStat(_ path: String) -> (FileStat, FileStat.Kind)? {
        if let known = dependencyStats?[path] { return known }
        let stat = FileStat.of(scanner.fullPath(path))
        dependencyStats?[path] = .some(stat)
        return stat
    }

    /// Graph nodes about to start: their last success no longer says they
    /// are up to date, in the store, before their processes spawn (one
    /// transaction for all). Only nodes the store remembers are written, so
    /// a run that starts nothing it remembered writes nothing here.
    public func starting(nodes indices: [Int]) {
        lock.lock()
        defer { lock.unlock() }
        dependencyStats = nil
        let names = indices.filter { remembered.remove($0) != nil }.map { graph.nodes[$0].name }
        guard let store, !names.isEmpty else { return }
        do {
            try store.markUnfinished(graph: graphKey, nodes: names)
        } catch {
            failed(error)
        }
    }

    /// Graph node `index` succeeded with these outputs: remember its fingerprint.
    public func recordSuccess(node index: Int, outputs: [(String, String)], values: [String]) {
        lock.lock()
        defer { lock.unlock() }
        guard let taken = pending.removeValue(forKey: index) else { return }
        var fingerprint = taken.fingerprint
        var deps: [String]?
        if let depfile = taken.depfile { (fingerprint, deps) = withDepfile(index, fingerprint, depfile) }
        succeeded[index] = StoredNode(fingerprint: fingerprint, outputs: outputs, values: values, updatedAt: Date(), deps: deps)
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
        return fingerprintLocked(index, needs: needs, previous: nil).0
    }

    private func fingerprintLocked(_ index: Int, needs: [NeedState], previous: StoredNode?) -> (NodeFingerprint, PendingDepfile?) {
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
        // `dir:` as the file writes it, not the resolved path: the graph
        // file's spelling (`./moon.yaml`, `../moon.yaml`, an absolute or
        // symlinked path) and moon's own working directory do not matter.
        command.add(Self.fingerprintedDirectory(node.dir))

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
        var depfile: PendingDepfile?
        if !node.sources.isEmpty {
            let files = scanner.files(matching: node.sources)
            manifest.reserveCapacity(files.count + (previous?.deps?.count ?? 0))
            sources.add(files.count)
            var old = OldEntries(previous?.fingerprint.manifest.entries ?? [])
            for file in files {
                sources.add(file.path)
                if let entry = entry(for: file, old: old.next(file.path)) {
                    sources.add(entry.hash)
                    manifest.append(entry)
                } else {
                    sources.add("unreadable")
                }
            }
            if let path = node.depfile {
                // The files the depfile of the last success listed, after the
                // patterns' (`record` digests them again as the new depfile lists them).
                let patternDigest = sources
                let patternCount = manifest.count
                sources.add("depfile")
                sources.add(path)
                if let deps = previous?.deps {
                    sources.add(deps.count)
                    for dep in deps {
                        sources.add(dep)
                        if let stat = dependencyStat(dep), stat.1 == .file,
                           let entry = entry(for: ScannedFile(path: dep, stat: stat.0), old: old.next(dep)) {
                            sources.add(entry.hash)
                            manifest.append(entry)
                        } else {
                            sources.add("missing")
                        }
                    }
                } else {
                    sources.add("unread")
                }
                depfile = PendingDepfile(digest: patternDigest, patternFiles: patternCount,
                                         checkedAt: FileStat.nowNanoseconds())
            }
        }
        let fingerprint = NodeFingerprint(command: command.finish(), environment: environment.finish(), needs: needsDigest.finish(),
                                          sources: sources.finish(), manifest: Manifest(entries: manifest))
        return (fingerprint, depfile)
    }

    /// A file's manifest entry: `old`'s when its stat is unchanged (and it
    /// was not racy), else from the stat cache or read and hashed; nil when
    /// it cannot be read.
    private func entry(for file: ScannedFile, old: Manifest.Entry?) -> Manifest.Entry? {
        let cache = loadedCache()
        if let old, old.stat == file.stat, !old.racy {
            cache.countReused()
            return old
        }
        guard let hashed = cache.hash(of: file, fullPath: scanner.fullPath(file.path)) else { return nil }
        return Manifest.Entry(path: file.path, stat: hashed.stat, racy: hashed.racy, hash: hashed.hash)
    }

    /// The previous manifest, walked in step with a new scan (same order when
    /// nothing moved); a dictionary only once they disagree.
    private struct OldEntries {
        let entries: [Manifest.Entry]
        var position = 0
        var byPath: [String: Int]?

        init(_ entries: [Manifest.Entry]) { self.entries = entries }

        mutating func next(_ path: String) -> Manifest.Entry? {
            if position < entries.count, entries[position].path == path {
                position += 1
                return entries[position - 1]
            }
            guard !entries.isEmpty else { return nil }
            if byPath == nil {
                var made: [String: Int] = [:]
                made.reserveCapacity(entries.count)
                for (k, entry) in entries.enumerated() { made[entry.path] = k }
                byPath = made
            }
            return byPath![path].map { entries[$0] }
        }
    }

    /// What `record` needs to digest a depfile node's new dependencies.
    struct PendingDepfile {
        /// The sources digest up to the patterns' files.
        var digest: DigestBuilder
        /// How many of the manifest's entries are the patterns' files.
        var patternFiles: Int
        /// When the node was checked (wall clock, ns): a dependency written
        /// since then may have changed while the command read it.
        var checkedAt: Int64
    }

    // MARK: - Depfiles

    /// After a success of depfile node `index`: its depfile's files, relative
    /// to the graph file's directory, and the fingerprint with them as its
    /// dependencies (nil deps: the depfile could not be read or parsed, a
    /// warning said so, and the node is not up to date next time).
    private func withDepfile(_ index: Int, _ fingerprint: NodeFingerprint, _ pending: PendingDepfile)
        -> (NodeFingerprint, [String]?) {
        let node = graph.nodes[index]
        guard let path = node.depfile else { return (fingerprint, nil) }
        let dir = Self.fingerprintedDirectory(node.dir)
        let depfilePath = Self.path(path, in: dir)
        let listed: [String]
        do {
            guard let data = FileManager.default.contents(atPath: scanner.fullPath(depfilePath)) else {
                onWarning("node '\(node.name)' succeeded but its depfile \(depfilePath) cannot be read; it runs again next time")
                return (fingerprint, nil)
            }
            listed = try Depfile.parse([UInt8](data))
        } catch {
            onWarning("node '\(node.name)': its depfile \(depfilePath) is malformed (\(error)); it runs again next time")
            return (fingerprint, nil)
        }
        let patternEntries = fingerprint.manifest.entries[..<pending.patternFiles]
        var before: [String: Manifest.Entry] = [:]
        for entry in fingerprint.manifest.entries[pending.patternFiles...] { before[entry.path] = entry }
        var taken = Set(patternEntries.map(\.path))
        var deps: [String] = []
        for file in listed {
            let dep = Self.path(file, in: dir)
            if taken.insert(dep).inserted { deps.append(dep) }
        }
        var sources = pending.digest
        var manifest = Array(patternEntries)
        sources.add("depfile")
        sources.add(path)
        sources.add(deps.count)
        for dep in deps {
            sources.add(dep)
            guard let found = FileStat.of(scanner.fullPath(dep)), found.1 == .file else {
                sources.add("missing")
                continue
            }
            let stat = found.0
            var entry: Manifest.Entry?
            if let old = before[dep] {
                // Hashed at the check: trusted while unchanged since.
                if old.stat == stat { entry = old }
            } else if stat.writtenBefore(pending.checkedAt) {
                // Unchanged since before the check, so what the command read.
                // (Not the stat cache's 100 ms racy margin: files written just
                // before a first build, as by a checkout, would run again.)
                entry = self.entry(for: ScannedFile(path: dep, stat: stat), old: nil)
            }
            // Written while the command ran (or unreadable): what it read is
            // unknown, so the node runs again next time.
            let known = entry ?? Manifest.Entry(path: dep, stat: stat, racy: true, hash: .zero)
            sources.add(known.hash)
            manifest.append(known)
        }
        let updated = NodeFingerprint(command: fingerprint.command, environment: fingerprint.environment, needs: fingerprint.needs,
                                      sources: sources.finish(), manifest: Manifest(entries: manifest))
        return (updated, deps)
    }

    /// `file` (as a depfile or a node's command names it, relative to the
    /// node's directory `dir`) relative to the graph file's directory.
    static func path(_ file: String, in dir: String) -> String {
        var file = Substring(file)
        while file.hasPrefix("./") { file = file.dropFirst(2).drop { $0 == "/" } }
        if file.hasPrefix("/") || dir == "." { return String(file) }
        return dir.hasSuffix("/") ? dir + file : dir + "/" + file
    }

    /// A node's `dir:` relative to the graph file's directory, without `.`
    /// segments and doubled slashes (`.` when it has none): the same
    /// directory whatever path moon was given to the graph file. `..` is
    /// kept (lexically `a/../b` need not be `b` when `a` is a link).
    static func fingerprintedDirectory(_ dir: String?) -> String {
        guard let dir, !dir.isEmpty else { return "." }
        let parts = dir.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let joined = parts.joined(separator: "/")
        if dir.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
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
