import Foundation
import MoonGraph
import Synchronization

/// The up-to-date check of one run: fingerprints nodes just before they
/// would start, compares them with the store's last successful ones, and
/// remembers the fingerprints of the nodes that succeed (written by
/// `flush`, in one transaction, at the end of the run). A store that fails
/// while in use gives one warning and is then left alone: moon goes on,
/// running what it cannot prove up to date. Thread-safe.
public final class IncrementalState: @unchecked Sendable {
    public let graph: Graph
    public let force: Bool
    /// `--force-only`: graph nodes run even when up to date (the nodes
    /// named on the command line), while their needs are checked as usual.
    public let forced: Set<Int>
    /// The graph file's name: one store serves every graph of a directory.
    public let graphKey: String
    private var store: StateStore?
    let scanner: SourceScanner
    /// Which vars each node reads: its fingerprint holds only those.
    let varReads: VarReads
    /// `varReads` per template (its instances share run, env, with and
    /// dir), so a fan-out parses its script once. Used with the lock held.
    var varsRead: [String: [String]] = [:]
    let lock = Mutex(())
    /// `checkStampLocked`'s part that every node shares (taken once).
    var sharedStamp: CheckStamp?
    private var cache: StatCache?
    /// Per graph node: whether its state is worth keeping — it has
    /// `sources`, or a node that needs it has (`moon status` of that one
    /// reads its last outputs). The others are neither fingerprinted nor
    /// stored, so a graph without `sources` costs nothing here.
    private var tracked: [Bool]
    /// The instances of dynamic fan-outs made during the run (`add`): graph
    /// node `graph.nodes.count + i` is `made[i]`.
    private var made: [Node] = []
    /// Fingerprints taken by `check`, until the node succeeds.
    var pending: [Int: Pending] = [:]
    struct Pending {
        var fingerprint: NodeFingerprint
        var depfile: PendingDepfile?
        /// Its sources digest covers exactly its manifest's files (see `stands`).
        var complete: Bool
        /// Files its patterns match whose names are not UTF-8 (`FileName.shown`).
        var unnamable: [String] = []
        /// Its `CheckStamp`, stored with its success.
        var stamp: CheckStamp
        /// Set when `check` found it up to date by stats alone: `fingerprint`
        /// is then the stored one, and no digest of it was taken. What needs
        /// more (a cache key, a success) takes it anew with these needs (`taken`).
        var quickNeeds: [NeedState]?
    }
    /// The needs each node with `sources` was fingerprinted with, for the
    /// parts `recordSuccess` keeps (`FingerprintParts`); set where its
    /// digests are taken, never by the check by stats.
    var checkedNeeds: [Int: [NeedState]] = [:]
    /// The parts (`FingerprintParts.json`) of the nodes in `succeeded` that
    /// ran or were restored, written beside them by `flush`.
    var succeededParts: [Int: String] = [:]
    /// Nodes whose last success the store holds (seen by `check`): what
    /// `starting` has to forget.
    private var remembered = Set<Int>()
    /// Nodes whose unnamable sources were warned about (once per node).
    private var warnedUnnamable = Set<Int>()
    var succeeded: [Int: StoredNode] = [:]
    let onWarning: (String) -> Void
    /// Polled while a file is hashed: true stops the hash, and the file
    /// counts as unreadable (`ContentHash.ofFile`). A run sets it to its
    /// runner's `CheckInterruption` before the first check.
    public var shouldStop: @Sendable () -> Bool = { false }

    public init(graph: Graph, store: StateStore?, force: Bool = false, forcing forced: Set<Int> = [],
                onWarning: @escaping (String) -> Void = { _ in }) {
        self.graph = graph
        self.store = store
        self.force = force
        self.forced = forced
        self.onWarning = onWarning
        self.graphKey = StateStore.graphKey(forGraphAt: graph.path)
        self.scanner = SourceScanner(root: graph.directory)
        self.varReads = VarReads(graph: graph)
        var tracked = graph.nodes.map { !$0.sources.isEmpty }
        for node in graph.nodes where !node.sources.isEmpty {
            for need in node.needs {
                // A barrier stands for its instances, whose outputs the node reads (once per barrier).
                if !tracked[need], graph.nodes[need].isBarrier { for instance in graph.nodes[need].needs { tracked[instance] = true } }
                tracked[need] = true
            }
        }
        self.tracked = tracked
        // One table of the final size: grown by doubling, it would touch twice the pages.
        pending.reserveCapacity(tracked.lazy.filter { $0 }.count)
    }

    /// Files read and hashed, and files whose hash came from the stat cache, so far.
    public var statistics: (hashed: Int, reused: Int) {
        return lock.withLock { _ in (cache?.hashed ?? 0, cache?.reused ?? 0) }
    }

    /// Time spent in `check` so far (walking, stat-ing, hashing, reading the store), in seconds.
    public var checkSeconds: Double {
        return lock.withLock { _ in Double(checkNanoseconds) / 1e9 }
    }
    private var checkNanoseconds: Int64 = 0
    /// Checks that found a node up to date by stats alone (`standsByStat`).
    private(set) var statOnly = 0

    /// Decides whether graph node `index` is up to date, given what its needs left it.
    /// Whether `index` is fingerprinted (it has `sources`, or a node with
    /// sources needs it); `check` says `.untracked` for the others.
    public func isTracked(_ index: Int) -> Bool {
        return lock.withLock { _ in tracked[index] }
    }

    /// Adds the instances of a dynamic fan-out, made during the run, as
    /// nodes after the graph's (tracked, as their template is); returns the
    /// index of the first. They are then checked and remembered as any node.
    public func add(instances: [Node]) -> Int {
        return lock.withLock { _ in
            let first = tracked.count
            made += instances
            tracked += repeatElement(true, count: instances.count)
            return first
        }
    }

    /// Whether the store held a success of graph node `index` when `check`
    /// looked (it ran, or was restored, here before).
    public func remembers(_ index: Int) -> Bool {
        return lock.withLock { _ in remembered.contains(index) }
    }

    /// Graph node `index`, or an instance `add` made. Called with the lock held.
    func nodeLocked(_ index: Int) -> Node {
        index < graph.nodes.count ? graph.nodes[index] : made[index - graph.nodes.count]
    }

    /// Graph node `index`, or an instance `add` made.
    public func node(at index: Int) -> Node {
        // The graph's own nodes never change during a run; only the instances added by `add` need the lock.
        if index < graph.nodes.count { return graph.nodes[index] }
        return lock.withLock { _ in nodeLocked(index) }
    }

    public func check(node index: Int, needs: [NeedState]) -> Verdict {
        return lock.withLock { _ in
            guard tracked[index] else { return .untracked }
            let started = FileStat.monotonicNanoseconds()
            defer { checkNanoseconds += FileStat.monotonicNanoseconds() - started }
            let needsQuiet = needsQuietLocked(index)
            quietCheck = needsQuiet
            defer { quietCheck = false }
            let node = nodeLocked(index)
            // The last success first: its manifest spares re-reading unchanged files.
            let stored = node.sources.isEmpty || store == nil ? nil : storedLocked(node.name)
            if stored != nil { remembered.insert(index) }
            let stamp = checkStampLocked(node, needs: needs)
            var scan: SourceScan?
            if let stored, !force, !forced.contains(index), standsByStat(node, stored, stamp, scan: &scan) {
                pending[index] = Pending(fingerprint: stored.fingerprint, depfile: nil, complete: true, stamp: stamp, quickNeeds: needs)
                statOnly += 1
                if needsQuiet { quiet[index] = true }
                return .upToDate(outputs: stored.outputs, values: stored.values)
            }
            // Kept for `moon status` of its dependents too (hence `tracked`).
            let taken = fingerprintLocked(index, needs: needs, previous: stored, stamp: stamp, scan: scan)
            let fingerprint = taken.fingerprint
            pending[index] = taken
            guard !node.sources.isEmpty else { return .untracked }
            checkedNeeds[index] = needs
            if !taken.unnamable.isEmpty {
                // Refused, not skipped: moon cannot hash what it cannot name, so
                // the node runs every time and the warning says which files.
                if warnedUnnamable.insert(index).inserted {
                    let shown = taken.unnamable.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
                        + (taken.unnamable.count > 3 ? " and \(taken.unnamable.count - 3) more" : "")
                    onWarning("node '\(node.name)': its sources match \(shown), whose name is not UTF-8; moon cannot track such a file,"
                              + " so the node runs every time (rename the file, or leave it out with a '!' pattern)")
                }
                return .stale([.unnamableSources(taken.unnamable)])
            }
            if force || forced.contains(index) { return .stale([.forced]) }
            guard store != nil else { return .stale([.noStore]) }
            guard let stored else { return .stale([.neverRun]) }
            if stored.unfinished { return .stale([.unfinished]) }
            if let path = node.depfile, stored.listed == nil { return .stale([.depfileUnread(path)]) }
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
            for pattern in node.generates where !scanner.exists(pattern, memo: memo) {
                reasons.append(.outputMissing(pattern))
            }
            guard reasons.isEmpty else { return .stale(reasons) }
            // Up to date by its digests, not by stats alone: files touched
            // without a change, racy files that settled, or a record without
            // a stamp. Keep the new stats and stamp, so the next check needs
            // no digest and no stat cache.
            if stored.stamp != stamp || (stored.patterns == nil && taken.complete)
                || stored.fingerprint.manifest.entries != fingerprint.manifest.entries {
                succeeded[index] = StoredNode(fingerprint: fingerprint, outputs: stored.outputs, values: stored.values,
                                              updatedAt: stored.updatedAt, listed: stored.listed,
                                              patterns: taken.complete ? Self.patternsKey(node) : nil, stamp: stamp)
            }
            if needsQuiet { quiet[index] = true }
            return .upToDate(outputs: stored.outputs, values: stored.values)
        }
    }

    /// Whether the last success `stored` stands by stats alone: the same
    /// check stamp (command, environment, patterns, what the needs left),
    /// a complete record, every file its patterns match and its depfile
    /// listed with the stat its manifest holds (none racy), and each
    /// `generates` pattern matching something. Takes no digest and reads
    /// no file. `scan`: the patterns' files, for the full check when not.
    private func standsByStat(_ node: Node, _ stored: StoredNode, _ stamp: CheckStamp, scan: inout SourceScan?) -> Bool {
        guard stored.stamp == stamp, !stored.unfinished, stored.patterns != nil else { return false }
        let found = scanner.scan(matching: node.sources, leavingOut: node.generates, memo: memo)
        scan = found
        let files = found.files
        guard found.unnamable.isEmpty, stored.fingerprint.manifest.entries.count >= files.count else { return false }
        // After the patterns' files, the manifest holds exactly the files the depfile listed.
        if node.depfile == nil {
            guard stored.fingerprint.manifest.entries.count == files.count else { return false }
        } else {
            guard stored.lists(stored.fingerprint.manifest.entries, from: files.count) else { return false }
        }
        // By index, in place: an entry taken out of the array is a copy that retains its path.
        let unchanged = stored.fingerprint.manifest.entries.withUnsafeBufferPointer { entries -> Bool in
            for i in files.indices where entries[i].racy || files[i].stat != entries[i].stat || files[i].path != entries[i].path {
                return false
            }
            let listed = UnsafeBufferPointer(rebasing: entries[files.count...])
            if let memo { return memo.allUnchanged(listed, scanner) }
            for entry in listed {
                guard !entry.racy, let now = dependencyStat(entry.path), now.1 == .file, now.0 == entry.stat else { return false }
            }
            return true
        }
        guard unchanged else { return false }
        for pattern in node.generates where !scanner.exists(pattern, memo: memo) { return false }
        return true
    }

    /// What `check` took of graph node `index`, with its digests: one it
    /// found up to date by stats alone has them taken now, from the needs
    /// it was checked with. Called with the lock held.
    func takenLocked(_ index: Int) -> Pending? {
        guard let taken = pending[index] else { return nil }
        guard let needs = taken.quickNeeds else { return taken }
        let node = nodeLocked(index)
        let full = fingerprintLocked(index, needs: needs, previous: store == nil ? nil : storedLocked(node.name), stamp: taken.stamp,
                                     scan: nil)
        pending[index] = full
        checkedNeeds[index] = needs
        return full
    }

    /// The source files (and depfile dependencies) `check` found for graph
    /// node `index`, relative to the graph file's directory.
    public func checkedSources(node index: Int) -> [String] {
        return lock.withLock { _ in pending[index]?.fingerprint.manifest.entries.map(\.path) ?? [] }
    }

    /// What the store remembers of node `name`'s last success (nil without a store).
    public func stored(_ name: String) -> StoredNode? {
        return lock.withLock { _ in storedLocked(name) }
    }

    func storedLocked(_ name: String) -> StoredNode? {
        guard let store else { return nil }
        if let all = allStored { return all[name] }
        do {
            // All of the graph's at the first question (one read, not one per node).
            let all = try store.nodeStates(graph: graphKey)
            allStored = all
            stats.reserve(all.values.reduce(graph.nodes.count) { $0 + $1.fingerprint.manifest.entries.count })
            return all[name]
        } catch {
            failed(error)
            return nil
        }
    }

    /// The store's node states of this graph as the run began (read once).
    private var allStored: [String: StoredNode]?

    /// The graph nodes `indices` are about to be checked, in this order: the
    /// files their last successes' manifests name, and the files they
    /// declare, are stat'ed ahead (`StatMemo.expect`). Without a store, or
    /// with `--force`, nothing is.
    public func expectChecks(of indices: [Int]) {
        lock.withLock { _ in
            guard !force, store != nil, !disturbed, stats.isEmpty else { return }
            var paths: [String] = []
            paths.reserveCapacity(4 * indices.count)
            // The nodes read in place: a copy of each costs more than its paths.
            for index in indices where index < graph.nodes.count && tracked[index] && !forced.contains(index) {
                guard !graph.nodes[index].sources.isEmpty, let stored = storedLocked(graph.nodes[index].name), stored.patterns != nil else {
                    continue
                }
                for entry in stored.fingerprint.manifest.entries { paths.append(entry.path) }
                for pattern in graph.nodes[index].generates {
                    if Glob.isPlainPath(pattern) {
                        paths.append(pattern)
                    } else if case let glob = Glob(pattern), glob.isLiteral {
                        paths.append(glob.base)
                    }
                }
            }
            stats.expect(paths, scanner)
        }
    }

    /// Stats of paths named outright (depfile dependencies, which many
    /// nodes list; literal sources and outputs, which a later glob walks
    /// over), so each is stat'ed once per run (`memo` says when it answers).
    let stats = StatMemo()
    /// Stats `currentEntries` took itself (the memo did not know the file), for the tests.
    var dependencyStats = 0
    /// A node started or a restore wrote: files may change from now on.
    private var disturbed = false
    /// The check in progress is of a node whose needs are all `quiet`.
    private var quietCheck = false
    /// Per graph node: found up to date, as were its needs and theirs, so
    /// nothing that precedes it ran or was restored in this run.
    private lazy var quiet = Array(repeating: false, count: graph.nodes.count)

    /// The memo, where its stats still stand: until a node starts or a
    /// restore writes; after, only in the check of a node with `quiet`
    /// needs (no file it may read was written by what precedes it; a file
    /// of a node not ordered before it is as racy as ninja's stat taken
    /// once per build), and never for the files a started or restored node
    /// declares (`StatMemo.forget`). An edit's sweep of unchanged nodes
    /// thus stats each header once, however early the first one starts.
    var memo: StatMemo? { !disturbed || (quietCheck && stats.servesAfterStart) ? stats : nil }

    /// Whether the memo's stats stand for graph node `index` outside its
    /// check (a cache entry's dependencies): by `memo`'s rule, with its needs for the check's.
    func memoServesLocked(_ index: Int) -> Bool {
        !disturbed || (needsQuietLocked(index) && stats.servesAfterStart)
    }

    /// Whether every need of graph node `index` is `quiet` (true without needs; false for an instance).
    private func needsQuietLocked(_ index: Int) -> Bool {
        guard index < graph.nodes.count else { return false }
        for need in graph.nodes[index].needs where !quiet[need] { return false }
        return true
    }

    /// Graph node `index` starts or is restored: its declared files may change.
    private func disturbLocked(_ index: Int) {
        disturbed = true
        if index < quiet.count { quiet[index] = false }
        for pattern in nodeLocked(index).generates { stats.forget(pattern) }
    }

    func dependencyStat(_ path: String) -> (FileStat, FileStat.Kind)? {
        guard let memo else { return FileStat.of(scanner.fullPath(path)) }
        return memo.stat(path, scanner)
    }

    /// Graph node `index` is about to be restored: the cache writes its
    /// outputs outside a process, as a started node would.
    public func filesChanging(node index: Int) {
        lock.withLock { _ in disturbLocked(index) }
    }

    /// Graph nodes about to start: their last success no longer says they
    /// are up to date, in the store, before their processes spawn (one
    /// transaction for all). Only nodes the store remembers are written, so
    /// a run that starts nothing it remembered writes nothing here.
    public func starting(nodes indices: [Int]) {
        lock.withLock { _ in
            for index in indices { disturbLocked(index) }
            let names = indices.filter { remembered.remove($0) != nil }.map { nodeLocked($0).name }
            guard let store, !names.isEmpty else { return }
            do {
                try store.markUnfinished(graph: graphKey, nodes: names)
            } catch {
                failed(error)
            }
        }
    }

    /// Graph node `index` succeeded with these outputs: remember its
    /// fingerprint. `restored`: it was restored from a cache entry, whose
    /// depfile's files `currentEntries` found unchanged.
    public func recordSuccess(node index: Int, outputs: [(String, String)], values: [String], restored: [Manifest.Entry]? = nil) {
        let recorded: (node: StoredNode, parts: FingerprintParts)? = lock.withLock { _ in
            guard let taken = takenLocked(index) else { return nil }
            pending[index] = nil
            var fingerprint = taken.fingerprint
            var deps: [String]?
            var complete = taken.complete
            if let depfile = taken.depfile {
                if let restored {
                    (fingerprint, deps, complete) = withRestoredDepfile(index, fingerprint, depfile, restored)
                } else {
                    (fingerprint, deps, complete) = withDepfile(index, fingerprint, depfile)
                }
            }
            let now = Date()
            let stored = StoredNode(fingerprint: fingerprint, outputs: outputs, values: values, updatedAt: now, deps: deps,
                                    patterns: complete ? Self.patternsKey(nodeLocked(index)) : nil, stamp: taken.stamp)
            // The parts `moon why` compares with, kept only where a check can find the node up to date.
            guard store != nil, !nodeLocked(index).sources.isEmpty else {
                succeeded[index] = stored
                return nil
            }
            var parts = partsLocked(index, needs: checkedNeeds.removeValue(forKey: index) ?? [], manifest: fingerprint.manifest,
                                    withValues: false)
            parts.forced = force || forced.contains(index)
            parts.at = now.timeIntervalSince1970
            parts.fingerprint = fingerprint.combined.hex
            return (stored, parts)
        }
        // Encoded with the lock released: restores on the check threads
        // record their successes side by side. The state and its parts are
        // kept together, so a flush writes both or neither.
        guard let recorded else { return }
        let json = recorded.parts.json
        lock.withLock { _ in
            succeeded[index] = recorded.node
            succeededParts[index] = json
        }
    }

    /// Writes what this run learnt (fingerprints of nodes that succeeded, the
    /// stat cache) in one transaction.
    public func flush() {
        lock.withLock { _ in
            guard let store else { return }
            let files = cache?.changed ?? [:]
            guard !files.isEmpty || !succeeded.isEmpty else { return }
            do {
                try store.saveNodeStates(graph: graphKey, succeeded.map { (nodeLocked($0.key).name, $0.value) }, files: files,
                                         parts: succeededParts.map { (nodeLocked($0.key).name, $0.value) })
                cache?.markSaved()
                succeeded = [:]
                succeededParts = [:]
            } catch {
                failed(error)
            }
        }
    }

    private func failed(_ error: Error) {
        onWarning("cannot use \(store?.path ?? "the state store") (\(store?.failureReason(error) ?? StateStore.reason(error))); running what it cannot prove up to date, remembering nothing")
        store = nil
    }

    /// A file's manifest entry: `old`'s when its stat is unchanged (and it
    /// was not racy), else from the stat cache or read and hashed; nil when
    /// it cannot be read.
    func entry(for file: ScannedFile, old: Manifest.Entry?) -> Manifest.Entry? {
        let cache = loadedCache()
        if let old, old.stat == file.stat, !old.racy {
            cache.countReused()
            return old
        }
        // Once a node has started, a stat from the memo may be older than the
        // content about to be read: the hash is kept with a stat taken now.
        var file = file
        if disturbed, memo != nil {
            guard let now = FileStat.of(scanner.fullPath(file.path)), now.1 == .file else { return nil }
            file.stat = now.0
        }
        guard let hashed = cache.hash(of: file, fullPath: scanner.fullPath(file.path), shouldStop: shouldStop) else { return nil }
        return Manifest.Entry(path: file.path, stat: hashed.stat, racy: hashed.racy, hash: hashed.hash)
    }

    /// The stat cache, whose table is read only when a manifest does not answer.
    func loadedCache() -> StatCache {
        if let cache { return cache }
        let made = StatCache(source: StatCache.Source(one: { [weak self] path in
            guard let self, let store = self.store else { return nil }
            do {
                return try store.fileCacheEntry(path)
            } catch {
                self.failed(error)
                return nil
            }
        }, all: { [weak self] in
            guard let self, let store = self.store else { return [:] }
            do {
                return try store.loadFileCache()
            } catch {
                self.failed(error)
                return [:]
            }
        }))
        cache = made
        return made
    }
}
