import Foundation
import MoonCommand
import MoonSystem

/// The output cache as one run uses it: restores a node's entry when its
/// key has one (called from several threads at once), and stores what a
/// node produced after it succeeded, on a thread of its own so the run goes
/// on meanwhile, then uploads it, several entries at once (`finish` waits
/// for both, then keeps the cache within its size limit). Failures are
/// warnings, once each kind per run; a node whose entry cannot be used
/// simply runs.
public final class OutputCache: @unchecked Sendable {
    public let directory: CacheDirectory
    /// The graph file's directory: outputs' paths are relative to it.
    let root: String
    let limit: Int64
    /// Read after the local cache, written after it (nil: none).
    let remote: RemoteCache?
    private let storing = DispatchQueue(label: "moon.cache.store")
    /// Uploads wait on their own threads: a slow server never holds up storing locally.
    private let uploading = WorkerPool(name: "moon.upload", width: 4)
    private let lock = Lock()
    private var stored = 0
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
    }

    /// Whether a restore of `key` is worth trying: the local cache has its
    /// entry, or a remote cache may have it.
    public func mayHave(_ key: CacheKey) -> Bool {
        directory.hasEntry(key) || (remote.map { !$0.isOff } ?? false)
    }

    /// The run stops: remote requests in flight end, and no more are sent.
    public func cancel() {
        remote?.cancel()
    }

    /// Restores the entry under `key`, when there is one and `dependencies`
    /// accepts its depfile's files; nil: run the node.
    public func restore(_ key: CacheKey, node: String,
                        dependencies: ([CacheEntry.Dependency]) -> Bool = { $0.isEmpty }) -> Restored? {
        guard let entry = directory.entry(key) ?? download(key, node: node), dependencies(entry.dependencies) else { return nil }
        do {
            let restored = try OutputRestorer(root: root, cache: directory).restore(entry)
            return Restored(outputs: entry.outputPairs, values: entry.values, files: restored.files, bytes: restored.bytes)
        } catch CacheError.missingBlob {
            return nil
        } catch {
            warnOnce("restore", "cannot restore node '\(node)' from the cache in \(directory.path) (\(error)); running it")
            return nil
        }
    }

    /// After node `node` succeeded: stores its `generates` (and `extra`
    /// paths) with its outputs and values under `key`, in the background.
    public func store(_ key: CacheKey, node: String, generates: [String], extra: [String],
                      outputs: [(String, String)], values: [String], dependencies: [CacheEntry.Dependency]) {
        storing.async { [self] in
            do {
                let collector = OutputCollector(root: root, cache: directory)
                guard let (roots, files) = try collector.collect(generates: generates, extra: extra) else { return }
                let entry = CacheEntry(node: node, roots: roots, files: files, outputs: outputs, values: values,
                                       dependencies: dependencies)
                try directory.store(entry, as: key)
                lock.lock()
                stored += 1
                lock.unlock()
                upload(entry, as: key)
            } catch {
                warnOnce("store", "cannot store node '\(node)' in the cache \(directory.path) (\(error))")
            }
        }
    }

    /// Waits for the stores in progress; after a run that stored something,
    /// prunes the cache to its limit.
    public func finish() {
        storing.sync {}
        uploading.wait()
        lock.lock()
        let anything = stored > 0
        lock.unlock()
        guard anything else { return }
        _ = CacheUsage.prune(directory, maxBytes: limit)
    }

    /// The entry under `key` from the remote cache, with every blob the
    /// local cache lacks, each checked against its hash, kept locally.
    private func download(_ key: CacheKey, node: String) -> CacheEntry? {
        guard let remote, let data = remote.entry(key) else { return nil }
        guard let entry = try? CacheEntry.decode(data) else {
            warnOnce("remote-entry", "the remote cache \(remote.url) has an invalid entry for node '\(node)'; running it")
            return nil
        }
        for hash in Set(entry.files.compactMap(\.hash)) where !directory.hasBlob(hash) {
            do {
                guard try remote.downloadBlob(hash, into: directory) else { return nil }
            } catch CacheError.corruptBlob {
                warnOnce("remote-blob", "blob \(hash) from the remote cache \(remote.url) does not match its hash; running node '\(node)'")
                return nil
            } catch {
                warnOnce("restore", "cannot keep node '\(node)' from the remote cache in \(directory.path) (\(error)); running it")
                return nil
            }
        }
        try? directory.store(entryData: data, as: key)
        return entry
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

    private func warnOnce(_ kind: String, _ message: String) {
        lock.lock()
        let first = warned.insert(kind).inserted
        lock.unlock()
        if first { onWarning(message) }
    }
}
