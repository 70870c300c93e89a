import Foundation

/// What the output cache needs of a node's fingerprint. A depfile node's
/// cache fingerprint leaves out the files its depfile listed (they are
/// known only after a run): its cache entry lists them with their hashes,
/// and a restore checks them (`dependencies(node:)`).
extension IncrementalState {
    /// The fingerprint the last `check` of graph node `index` took, for the
    /// output cache (nil when it was not checked).
    public func cacheFingerprint(node index: Int) -> ContentHash? {
        lock.lock()
        defer { lock.unlock() }
        guard let taken = pending[index] else { return nil }
        guard let depfile = taken.depfile else { return taken.fingerprint.combined }
        var all = DigestBuilder("moon-cache-depfile-1")
        let fingerprint = taken.fingerprint
        for part in [fingerprint.command, fingerprint.environment, fingerprint.needs, depfile.digest.finish()] { all.add(part) }
        return all.finish()
    }

    /// After graph node `index` succeeded (`recordSuccess`) and before the
    /// run's `flush`: the files its depfile listed with their content
    /// hashes; empty for a node without a depfile, nil when one of them is
    /// unknown (written while the command ran) or the depfile was unreadable.
    public func dependencies(node index: Int) -> [(path: String, hash: ContentHash)]? {
        lock.lock()
        defer { lock.unlock() }
        guard nodeLocked(index).depfile != nil else { return [] }
        guard let stored = succeeded[index], let deps = stored.deps else { return nil }
        var hashes: [String: ContentHash] = [:]
        for entry in stored.fingerprint.manifest.entries { hashes[entry.path] = entry.hash }
        var result: [(path: String, hash: ContentHash)] = []
        for dep in deps {
            guard let hash = hashes[dep], hash != .zero else { return nil }
            result.append((dep, hash))
        }
        return result
    }

    /// The files a cache entry's depfile listed, when each has the entry's
    /// hash now: their manifest entries (stat taken before the hash, through
    /// the stat cache, so `recordSuccess` need not read them again); nil
    /// when one differs or cannot be read.
    public func currentEntries(of dependencies: [(path: String, hash: ContentHash)]) -> [Manifest.Entry]? {
        lock.lock()
        defer { lock.unlock() }
        var entries: [Manifest.Entry] = []
        entries.reserveCapacity(dependencies.count)
        for dependency in dependencies {
            let path = scanner.fullPath(dependency.path)
            guard let found = FileStat.of(path), found.1 == .file,
                  let hashed = loadedCache().hash(of: ScannedFile(path: dependency.path, stat: found.0), fullPath: path),
                  hashed.hash == dependency.hash else { return nil }
            entries.append(Manifest.Entry(path: dependency.path, stat: hashed.stat, racy: hashed.racy, hash: hashed.hash))
        }
        return entries
    }

    /// Where `file` of the graph (relative to its directory) is.
    public func fullPath(_ file: String) -> String {
        scanner.fullPath(file)
    }

    /// A node's depfile relative to the graph file's directory (nil: none).
    public func depfilePath(node index: Int) -> String? {
        let node = node(at: index)
        return node.depfile.map { Self.path($0, in: Self.fingerprintedDirectory(node.dir)) }
    }
}
