import Foundation

/// What the output cache needs of a node's fingerprint. A depfile node's
/// cache fingerprint leaves out the files its depfile listed (they are
/// known only after a run): its cache entry lists them with their hashes,
/// and a restore checks them (`dependencies(node:)`).
extension IncrementalState {
    /// The fingerprint the last `check` of graph node `index` took, for the
    /// output cache; nil when it was not checked, or when a file its
    /// patterns match could not be read: a key that does not cover a
    /// source's content could restore outputs made from other content.
    public func cacheFingerprint(node index: Int) -> ContentHash? {
        return lock.withLock { _ in
            guard let taken = takenLocked(index) else { return nil }
            guard let depfile = taken.depfile else { return taken.complete ? taken.fingerprint.combined : nil }
            guard depfile.patternsComplete else { return nil }
            var all = DigestBuilder("moon-cache-depfile-1")
            let fingerprint = taken.fingerprint
            for part in [fingerprint.command, fingerprint.environment, fingerprint.needs, depfile.digest.finish()] { all.add(part) }
            return all.finish()
        }
    }

    /// After graph node `index` succeeded (`recordSuccess`) and before the
    /// run's `flush`: the files its depfile listed with their content
    /// hashes; empty for a node without a depfile, nil when one of them is
    /// unknown (written while the command ran) or the depfile was unreadable.
    public func dependencies(node index: Int) -> [(path: String, hash: ContentHash)]? {
        return lock.withLock { _ in
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
    }

    /// The files a cache entry's depfile listed, when each has the entry's
    /// hash now: their manifest entries (stat taken before the hash, through
    /// the stat cache, so `recordSuccess` need not read them again); nil
    /// when one differs or cannot be read. Files the stat cache does not
    /// know are hashed outside the lock: a check off the loop may be
    /// hashing a large one while the loop records another node.
    public func currentEntries(of dependencies: [(path: String, hash: ContentHash)]) -> [Manifest.Entry]? {
        var entries: [Manifest.Entry?] = []
        var unknown: [(index: Int, file: ScannedFile)] = []
        // Stat'ed before the lock, hashed after it: the lock is held only
        // while the stat cache is asked, so restores on several threads do
        // not wait for each other's system calls.
        var files: [ScannedFile] = []
        files.reserveCapacity(dependencies.count)
        for dependency in dependencies {
            guard let found = FileStat.of(scanner.fullPath(dependency.path)), found.1 == .file else { return nil }
            files.append(ScannedFile(path: dependency.path, stat: found.0))
        }
        let cache: StatCache? = lock.withLock { _ in
            let loaded = loadedCache()
            for (file, dependency) in zip(files, dependencies) {
                let known = loaded.known(file)
                if let known, known.hash != dependency.hash { return nil }
                if known == nil { unknown.append((entries.count, file)) }
                entries.append(known.map { Manifest.Entry(path: file.path, stat: $0.stat, racy: $0.racy, hash: $0.hash) })
            }
            return loaded
        }
        guard let cache else { return nil }
        for (index, file) in unknown {
            let hashedAt = FileStat.nowNanoseconds()
            guard let hash = ContentHash.ofFile(scanner.fullPath(file.path), shouldStop: shouldStop) else { return nil }
            let racy = file.stat.isRacy(hashedAt: hashedAt)
            entries[index] = Manifest.Entry(path: file.path, stat: file.stat, racy: racy, hash: hash)
        }
        if !unknown.isEmpty {
            lock.withLock { _ in for (index, file) in unknown { cache.add(file, entries[index]!.hash, racy: entries[index]!.racy) } }
        }
        var result: [Manifest.Entry] = []
        result.reserveCapacity(entries.count)
        for (entry, dependency) in zip(entries, dependencies) {
            guard let entry, entry.hash == dependency.hash else { return nil }
            result.append(entry)
        }
        return result
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
