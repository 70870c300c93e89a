import Foundation
import MoonState
import MoonSystem
import Synchronization

/// The output cache as one run uses it: restores a node's entry when its
/// key has one (called from several threads at once), and stores what a
/// node produced after it succeeded, on a thread of its own so the run goes
/// on meanwhile, then uploads it, several entries at once (`finish` waits
/// for both, then keeps the cache within its size limit). Failures are
/// warnings (`warn`); a node whose entry cannot be used
/// simply runs. The directory is looked at when a node first needs it, so a
/// run that needs no entry (a no-op, nodes without sources) opens none of it;
/// a directory moon must not use is then one warning, and no entry is read or
/// stored.
public final class OutputCache: @unchecked Sendable {
    public let directory: CacheDirectory
    /// The graph file's directory: outputs' paths are relative to it.
    let root: String
    let limit: Int64
    /// Read after the local cache, written after it (nil: none).
    let remote: RemoteCache?
    /// Whether lookups and restores may go to a remote cache (and wait on the network).
    public var hasRemote: Bool { remote != nil }
    private let storing = DispatchQueue(label: "moon.cache.store")
    /// Uploads wait on their own threads: a slow server never holds up storing locally.
    private let uploading = WorkerPool(name: "moon.upload", width: 4)
    private let lock = Mutex(())
    /// What this run's stores and downloads added to the local cache (`UsageLedger.footprint`).
    private var added: Int64 = 0
    /// Set by `store`: `finish` has something to wait for.
    private var storeAsked = false
    /// Set by `cancel`: restores in progress end, later ones do not start.
    private var stopped = false
    /// Whether the directory may be used (`CacheDirectory.problem`), once a node asked.
    private var usable: Bool?
    /// Set by `interrupt`: stores end too (a failure's stop still stores what succeeded).
    private var interrupted = false
    private var warned = Set<String>()
    private let onWarning: (String) -> Void

    public init(directory: CacheDirectory, root: String, limit: Int64 = CacheUsage.defaultLimit, remote: RemoteCache? = nil,
                onWarning: @escaping (String) -> Void = { _ in }) {
        self.directory = directory
        self.remote = remote
        self.root = root
        self.limit = limit
        self.onWarning = onWarning
    }

    /// What a restore brought back.
    public struct Restored: Sendable {
        public var outputs: [(String, String)]
        public var values: [String]
        public var files: Int
        public var bytes: Int64
        /// The entry's files, each checked against its hash as it was written.
        public var written: [CacheEntry.File] = []
        /// The stats of the files the restore took from their descriptors (by path); the others are stat'ed in place.
        public var stats: [String: FileStat] = [:]
    }

    /// Whether a restore of `key` is worth trying: the local cache has its
    /// entry, or a remote cache may have it (`shared`: the node's outputs
    /// may come from the remote cache).
    public func mayHave(_ key: CacheKey, shared: Bool = true) -> Bool {
        guard isUsable else { return false }
        return directory.hasEntry(key) || (shared && (remote.map { !$0.isOff } ?? false))
    }

    /// The run stops: restores, stores and remote requests in flight end,
    /// and no more are made.
    public func cancel() {
        lock.withLock { _ in stopped = true }
        remote?.cancel()
    }

    /// The user stops the run (Ctrl-C, a signal): stores end as well, their
    /// partial blobs removed and nothing stored.
    public func interrupt() {
        lock.withLock { _ in interrupted = true }
        cancel()
    }

    /// Whether `cancel` was called (polled between blocks of a file).
    var isStopped: Bool {
        return lock.withLock { _ in stopped }
    }

    var isInterrupted: Bool {
        return lock.withLock { _ in interrupted }
    }

    /// Whether the local entry under `key` is one `restore` reads and then
    /// declines, because a file its depfile listed changed since (a header
    /// edit): a question answered from the entry alone, without a blob or a
    /// server, so the runner asks it on its loop. False when there is no
    /// such entry, or `restore` would say more (a refusal, a damaged entry).
    public func localEntryIsStale(_ key: CacheKey, declared: DeclaredOutputs,
                                  dependencies: ([CacheEntry.Dependency]) -> Bool) -> Bool {
        guard !isStopped, isUsable, let entry = (try? directory.readEntry(key, notingUse: false, parts: false)) ?? nil else { return false }
        return declared.refusal(of: entry) == nil && !dependencies(entry.dependencies)
    }

    /// Restores the entry under `key`, when there is one, it writes only
    /// what the node `declared`, and `dependencies` accepts its depfile's
    /// files; nil: run the node. A remote entry is checked before any of
    /// its blobs is downloaded, and kept locally only when it passes.
    /// `shared` false: only the local cache is asked (a node that reads a
    /// secret: docs/secrets.md).
    public func restore(_ key: CacheKey, node: String, declared: DeclaredOutputs, shared: Bool = true,
                        dependencies: ([CacheEntry.Dependency]) -> Bool = { $0.isEmpty }) -> Restored? {
        guard !isStopped, isUsable else { return nil }
        let local: CacheEntry?
        do {
            local = try directory.readEntry(key, parts: false)
        } catch CacheError.damaged(_, let why) {
            directory.removeEntry(key)
            warn("entry:" + node, "the cache entry of node '\(node)' in the cache \(directory.path) \(why) (removed); running it")
            local = nil
        } catch {
            local = nil
        }
        guard let (entry, data) = local.map({ ($0, nil) }) ?? (shared ? remoteEntry(key, node: node) : nil) else { return nil }
        let source = data == nil ? "in the cache \(directory.path)" : "from the remote cache \(remote?.url ?? "")"
        if let refusal = declared.refusal(of: entry) {
            warn("refused:" + node, "not restoring node '\(node)' \(source): \(refusal); running it")
            return nil
        }
        guard dependencies(entry.dependencies) else { return nil }
        if let data {
            guard download(entry, node: node) else { return nil }
            try? directory.store(entryData: data, as: key)
            lock.withLock { _ in added = UsageLedger.adding(UsageLedger.footprint(of: entry.files, entryBytes: data.count), to: added) }
        }
        do {
            var restorer = OutputRestorer(root: root, cache: directory)
            restorer.shouldStop = { [weak self] in self?.isStopped ?? true }
            let restored = try restorer.restore(entry)
            return Restored(outputs: entry.outputPairs, values: entry.values, files: restored.files, bytes: restored.bytes, written: entry.files,
                            stats: restored.stats)
        } catch CacheError.missingBlob, CacheError.stopped {
            return nil
        } catch CacheError.damaged(let path, let why) {
            warn("blob:" + path, "a blob of node '\(node)' in the cache \(directory.path): \(path) \(why) (removed); running it")
            return nil
        } catch CacheError.corruptBlob(let hash) {
            warn("blob:" + hash, "blob \(hash) in the cache \(directory.path) does not match its hash (removed); running node '\(node)'")
            return nil
        } catch CacheError.invalidEntry(let why) {
            warn("refused:" + node, "not restoring node '\(node)' \(source): its entry is invalid (\(why)); running it")
            return nil
        } catch CacheError.unsafe(let why) {
            warn("refused:" + node, "not restoring node '\(node)' \(source): \(why); running it")
            return nil
        } catch {
            warn("restore", "cannot restore node '\(node)' from the cache in \(directory.path) (\(error)); running it")
            return nil
        }
    }

    /// After node `node` succeeded: stores what it `declared` with its
    /// `$MOON_OUTPUT` outputs and values under `key`, in the background;
    /// not when it left a declared output missing or one the cache cannot
    /// carry (a warning says which): such an entry would be restored on
    /// every run and never be up to date, or leave that output stale.
    /// `shared` false: kept in the local cache only, never uploaded (a node
    /// that reads a secret may have put it in its outputs: docs/secrets.md).
    public func store(_ key: CacheKey, node: String, declared: DeclaredOutputs,
                      outputs: [(String, String)], values: [String], dependencies: [CacheEntry.Dependency], shared: Bool = true,
                      why: String? = nil) {
        guard isUsable else { return }
        lock.withLock { _ in storeAsked = true }
        storing.async { [self] in
            let missing = declared.notCreated(root: root)
            guard missing.isEmpty else {
                warn("missing:" + node, "node '\(node)' did not create \(missing.joined(separator: ", ")) of its generates, "
                    + "so it is not up to date after a run and is not stored in the cache; fix its 'generates' or its command")
                return
            }
            guard declared.outside.isEmpty else {
                let list = declared.outside.map { "'\($0)'" }.joined(separator: ", ")
                warn("outside:" + node, "node '\(node)' is not stored in the cache: it generates \(list), which the cache does not "
                    + "carry (only paths inside the graph file's directory, no '..' before a wildcard); set 'cache: false' on it")
                return
            }
            // The blobs this store put in the cache: removed when it fails (a full disk must not keep them).
            var placed: [String] = []
            defer { for hash in placed { directory.removeBlob(hash) } }
            do {
                var collector = OutputCollector(root: root, cache: directory)
                collector.maxFileSize = limit
                collector.shouldStop = { [weak self] in self?.isInterrupted ?? true }
                guard let (roots, files) = try collector.collect(declared, placed: &placed) else { return }
                var entry = CacheEntry(node: node, roots: roots, files: files, outputs: outputs, values: values,
                                       dependencies: dependencies)
                entry.why = why
                let entryBytes = try directory.store(entry, as: key)
                placed = []
                lock.withLock { _ in added = UsageLedger.adding(UsageLedger.footprint(of: files, entryBytes: entryBytes), to: added) }
                if shared { upload(entry, as: key) }
            } catch CacheError.stopped {
                return
            } catch CacheError.tooLarge(let path, let size) {
                warn("store:" + node, "node '\(node)' is not stored in the cache: its output '\(path)' has \(size) bytes, "
                    + "more than the cache's size limit (\(limit) bytes)")
            } catch CacheError.invalidEntry(let why) {
                warn("store:" + node, "cannot store node '\(node)' in the cache: \(why)")
            } catch {
                warn("store", "cannot store node '\(node)' in the cache \(directory.path) (\(error))")
            }
        }
    }

    /// Whether `store` was called or a download added to the local cache:
    /// only then has `finish` anything to do.
    public var isStoring: Bool {
        lock.withLock { _ in storeAsked || added > 0 }
    }

    /// Waits for the stores in progress; after a run that stored or
    /// downloaded something, keeps the cache within its limit. What it
    /// added is noted once (watch mode keeps this cache for its next run).
    public func finish() {
        storing.sync {}
        uploading.wait()
        let bytes = lock.withLock { _ in
            defer { added = 0 }
            return added
        }
        guard bytes > 0 else { return }
        CacheUsage.keep(directory, within: limit, adding: bytes)
    }

    /// The entry under `key` from the remote cache, and its bytes (to keep
    /// locally once its blobs are here).
    private func remoteEntry(_ key: CacheKey, node: String) -> (CacheEntry, Data?)? {
        guard let remote, let data = remote.entry(key) else { return nil }
        guard let entry = try? CacheEntry.decode(data, parts: false) else {
            warn("remote-entry", "the remote cache \(remote.url) has an invalid entry for node '\(node)'; running it")
            return nil
        }
        return (entry, data)
    }

    /// Downloads every blob of `entry` the local cache lacks, each checked
    /// against its hash as it arrives; false: run the node.
    private func download(_ entry: CacheEntry, node: String) -> Bool {
        guard let remote else { return false }
        for hash in Set(entry.files.compactMap(\.hash)) where !directory.hasBlob(hash) {
            do {
                guard try remote.downloadBlob(hash, size: entry.files.first { $0.hash == hash }?.size, into: directory) else { return false }
            } catch CacheError.corruptBlob {
                warn("blob:" + hash, "blob \(hash) from the remote cache \(remote.url) does not match its hash; running node '\(node)'")
                return false
            } catch {
                warn("restore", "cannot keep node '\(node)' from the remote cache in \(directory.path) (\(error)); running it")
                return false
            }
        }
        return true
    }

    /// Sends a stored entry to the remote cache: its blobs, then the entry
    /// (so an entry there never names a blob that is not).
    private func upload(_ entry: CacheEntry, as key: CacheKey) {
        guard let remote, !remote.readOnly else { return }
        uploading.run { [directory] in
            for hash in Set(entry.files.compactMap(\.hash)) {
                guard remote.uploadBlob(hash, from: directory) else { return }
            }
            guard let data = try? entry.encoded() else { return }
            _ = remote.putEntry(key, data)
        }
    }

    /// Says `message` once per run for each `topic`: a corrupt blob per
    /// blob, a refused entry or a missing output per node, other failures once.
    /// Whether the directory may be used, looked at on the first question
    /// (nodes ask from several threads: one looks, the others wait for it).
    private var isUsable: Bool {
        let (ok, problem) = lock.withLock { _ -> (Bool, String?) in
            if let usable { return (usable, nil) }
            let problem = directory.problem
            usable = problem == nil
            return (problem == nil, problem)
        }
        if let problem { onWarning(problem + "; running without the cache") }
        return ok
    }

    private func warn(_ topic: String, _ message: String) {
        let first = lock.withLock { _ in warned.insert(topic).inserted }
        if first { onWarning(message) }
    }
}
