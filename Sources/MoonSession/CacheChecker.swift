import Foundation
import MoonCache
import MoonCommand
import MoonEvents
import MoonGraph
import MoonRun
import MoonState
import Synchronization

/// The up-to-date check with the output cache and `--resume` behind it. A
/// node that is not up to date but whose cache key has an entry is restored
/// (skipped with reason `cache-hit`) instead of run, and a node that
/// succeeded has its outputs stored; only nodes with `sources` (and not
/// `cache: false`) are cached, a node without `generates` as a remembered
/// success. With `--resume`, a node
/// without sources that succeeded in the last run, none of whose needs ran
/// in this one, is skipped (reason `resumed`) with that run's outputs and
/// values. Every node's outputs and values are kept for the next resume.
/// Called on the runner's scheduler or its check workers (several at once):
/// a restore, which waits for the disk and perhaps a server, never runs on
/// the loop (`CheckInterruption.moveOffLoop`).
package final class CacheChecker: UpToDateChecking {
    private let inner: StoreChecker
    private let state: IncrementalState
    private let cache: OutputCache?
    /// The last run, with `--resume`.
    private let resume: ResumeRecord?
    /// With --force nothing is restored; what runs is still stored.
    private let restores: Bool
    private let lock = Mutex(())
    /// Keys taken by the checks, until the node succeeds.
    private var keys: [Int: CacheKey] = [:]
    /// Nodes whose check on the loop found a key worth restoring, and moved
    /// off it: their check off the loop goes straight to the restore.
    private var deferred: [Int: CacheKey] = [:]
    /// Moves restores off the loop; its stop ends remote requests.
    package var interruption: CheckInterruption? {
        didSet { interruption?.onCancel { [cache] in cache?.cancel() } }
    }
    /// Graph nodes that started in this run.
    private var started = Set<Int>()
    /// Per plan node that succeeded (or was skipped as such): its outputs and values.
    private var results: [Int: (outputs: [(String, String)], values: [String])] = [:]

    /// What every node's environment shares now, against the record's (`resumable`).
    private lazy var sharedDefinition = state.sharedDefinitionStamp()

    package init(inner: StoreChecker, state: IncrementalState, plan: Plan, cache: OutputCache?, resume: ResumeRecord?) {
        self.inner = inner
        self.state = state
        self.cache = cache
        self.resume = resume
        self.restores = !state.force
    }

    package var waitsOnNetwork: Bool { cache?.hasRemote ?? false }

    package func checks(node: Int) -> Bool {
        inner.checks(node: node) || inner.stateIndex(node).flatMap(resumable) != nil
    }

    package func expand(template: Int, items: [String], first: Int) -> Bool {
        inner.expand(template: template, items: items, first: first)
    }

    package func starting(nodes: [Int]) {
        let indices = nodes.compactMap(inner.stateIndex)
        lock.withLock { _ in started.formUnion(indices) }
        inner.starting(nodes: nodes)
    }

    package func upToDate(node: Int, inputs: NodeInputs) -> RestoredResult? {
        let restored = restoredResult(node: node, inputs: inputs)
        if let restored {
            lock.withLock { _ in results[node] = (restored.outputs.map { ($0.key, $0.value) }, restored.values) }
        }
        return restored
    }

    private func restoredResult(node: Int, inputs: NodeInputs) -> RestoredResult? {
        guard let index = inner.stateIndex(node) else { return nil }
        if let last = resumable(index), !needRan(index) {
            return RestoredResult(outputs: last.outputPairs.map { KeyValue($0.0, $0.1) }, values: last.values, resumed: true)
        }
        let moved = lock.withLock { _ in deferred.removeValue(forKey: node) }
        if let key = moved { return restore(node, key) }
        if let upToDate = inner.upToDate(node: node, inputs: inputs) { return upToDate }
        let spec = spec(index)
        guard let cache, Self.isCached(spec), let fingerprint = state.cacheFingerprint(node: index) else { return nil }
        let key = CacheKey(fingerprint: fingerprint)
        lock.withLock { _ in keys[node] = key }
        guard restores, !state.forced.contains(index), cache.mayHave(key, shared: isShared(spec)) else { return nil }
        // A node that succeeded here before and is stale now (a header edit)
        // mostly finds a local entry made with its depfile's old files. Such
        // an entry is declined here: moved off the loop, the check would take
        // every later check of the run off it too, to threads that wait on
        // the state. A node never seen here (a fresh checkout) moves at once,
        // so its restore does not wait for the loop; an entry that passes is
        // read and checked again by the restore, just before it copies.
        if spec.depfile != nil, state.remembers(index),
           cache.localEntryIsStale(key, declared: Self.declaredOutputs(state, index, spec),
                                   dependencies: { self.currentEntries($0, node: index) != nil }) { return nil }
        if interruption?.moveOffLoop() == true {
            lock.withLock { _ in deferred[node] = key }
            return nil
        }
        return restore(node, key)
    }

    /// Restores plan node `node` from the entry under `key`; nil: run it.
    private func restore(_ node: Int, _ key: CacheKey) -> RestoredResult? {
        guard let index = inner.stateIndex(node) else { return nil }
        let spec = spec(index)
        // A restore writes files as a started node would: stats taken before it no longer stand.
        state.filesChanging(node: index)
        // The depfile's files as the entry's check found them, for the record.
        var current: [Manifest.Entry]?
        guard let cache, let restored = cache.restore(key, node: spec.name, declared: Self.declaredOutputs(state, index, spec),
                                                      shared: isShared(spec), dependencies: { dependencies in
            current = self.currentEntries(dependencies, node: index)
            return current != nil
        }) else { return nil }
        // Their verified hashes: a node reading them (an archive of restored objects) need not hash them again.
        state.restored(files: restored.written.compactMap { file in file.kind == .file ? file.hash.map { (file.path, $0) } : nil },
                       stats: restored.stats)
        // Remembered as a success: the next run finds it up to date.
        state.recordSuccess(node: index, outputs: restored.outputs, values: restored.values,
                            restored: spec.depfile == nil ? nil : current)
        return RestoredResult(outputs: restored.outputs.map { KeyValue($0.0, $0.1) }, values: restored.values,
                              cache: CacheRestore(files: restored.files, bytes: restored.bytes))
    }

    package func succeeded(node: Int, outputs: [KeyValue], values: [String]) {
        inner.succeeded(node: node, outputs: outputs, values: values)
        let key = lock.withLock { _ in
            let key = keys.removeValue(forKey: node)
            results[node] = (outputs.map { ($0.key, $0.value) }, values)
            return key
        }
        // A depfile that listed a file written while the command ran: what it read is unknown.
        guard let cache, let key, let index = inner.stateIndex(node), let dependencies = state.dependencies(node: index) else { return }
        let spec = spec(index)
        cache.store(key, node: spec.name, declared: Self.declaredOutputs(state, index, spec),
                    outputs: outputs.map { ($0.key, $0.value) }, values: values,
                    dependencies: dependencies.map { CacheEntry.Dependency(path: $0.path, hash: $0.hash.hex) }, shared: isShared(spec),
                    why: state.recordedParts(node: index))
    }

    /// What `--resume` of the next run needs: how each node of this run
    /// without sources ended, and the outputs and values of those that succeeded.
    package func resumeRecord(_ summary: Runner.Summary) -> ResumeRecord {
        return lock.withLock { _ in
            var nodes: [String: ResumeRecord.Node] = [:]
            // Only nodes without sources: `--resume` skips no other
            // (`resumable`), so a graph of compile steps records next to
            // nothing, and its no-op stamps no definition to say so.
            for (node, ended) in summary.nodes.enumerated() {
                let index = inner.stateIndex(node)
                if let index, hasSources(index) { continue }
                let succeeded = ended.result == .succeeded || ended.result == .upToDate
                let result = succeeded ? results[node] : nil
                let definition = succeeded ? index.map { state.definitionStamp(node: $0) } : nil
                nodes[ended.name] = ResumeRecord.Node(succeeded: succeeded, outputs: result?.outputs ?? [], values: result?.values ?? [],
                                                      definition: definition)
            }
            return ResumeRecord(nodes: nodes, shared: nodes.isEmpty ? nil : state.sharedDefinitionStamp())
        }
    }

    /// Whether a node's outputs go through the cache at all. A check-only
    /// node (sources, no generates: a lint, a type check) has an entry of
    /// no files: its success is remembered per fingerprint, so an A → B → A
    /// switch does not run it again. A service is never skipped this way.
    package static func isCached(_ node: Node) -> Bool {
        node.cached && !node.sources.isEmpty && !node.isService
    }

    /// What graph node `index` (`node`, when the caller has it) may write, and so what its entries may hold.
    package static func declaredOutputs(_ state: IncrementalState, _ index: Int, _ node: Node? = nil) -> DeclaredOutputs {
        let node = node ?? state.node(at: index)
        return DeclaredOutputs(generates: node.generates, extra: node.depfile == nil ? [] : state.depfilePath(node: index).map { [$0] } ?? [])
    }

    /// Graph node `index`: a node of the graph read as it is, without the
    /// state's lock (which a check holds while it hashes), an instance made
    /// during the run from the state.
    /// Whether the node's outputs go through the remote cache: not when it
    /// reads a secret, which it may have written into them (docs/secrets.md).
    private func isShared(_ node: Node) -> Bool {
        state.graph.secrets.isEmpty || node.secretNames.isEmpty
    }

    /// Whether node `index` has sources, read without a copy of the node.
    private func hasSources(_ index: Int) -> Bool {
        index < state.graph.nodes.count ? !state.graph.nodes[index].sources.isEmpty : !state.node(at: index).sources.isEmpty
    }

    private func spec(_ index: Int) -> Node {
        index < state.graph.nodes.count ? state.graph.nodes[index] : state.node(at: index)
    }

    /// With `--resume` (and not `--force`): the last run's record of graph
    /// node `index` when it succeeded there, has no sources (those are
    /// checked as usual), and its command and environment are unchanged.
    private func resumable(_ index: Int) -> ResumeRecord.Node? {
        guard let resume, restores, !state.forced.contains(index), resume.shared == sharedDefinition else { return nil }
        let node = spec(index)
        guard node.sources.isEmpty, let last = resume.nodes[node.name], last.succeeded,
              last.definition == state.definitionStamp(node: index) else { return nil }
        return last
    }

    /// Whether a need of graph node `index` started in this run (then its
    /// outputs may differ); a barrier's, when one of its instances did
    /// (asked once per barrier: its instances have all ended by then).
    private func needRan(_ index: Int) -> Bool {
        let needs = spec(index).needs
        return lock.withLock { _ in
            return needs.contains { need in
                if started.contains(need) { return true }
                guard spec(need).isBarrier else { return false }
                if let ran = barrierRan[need] { return ran }
                let ran = spec(need).needs.contains { started.contains($0) }
                barrierRan[need] = ran
                return ran
            }
        }
    }
    private var barrierRan: [Int: Bool] = [:]

    /// The files an entry's depfile listed, when each still has its hash.
    private func currentEntries(_ dependencies: [CacheEntry.Dependency], node index: Int) -> [Manifest.Entry]? {
        var hashes: [(path: String, hash: ContentHash)] = []
        hashes.reserveCapacity(dependencies.count)
        for dependency in dependencies {
            guard let hash = ContentHash(hex: dependency.hash) else { return nil }
            hashes.append((dependency.path, hash))
        }
        return state.currentEntries(node: index, of: hashes)
    }
}
