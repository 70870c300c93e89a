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
    /// when one differs or cannot be read. Graph node `index`'s (nil: not
    /// known) stats come from the run's memo where it stands for the node
    /// (`memoServesLocked`): a header 300 entries list is stat'ed once.
    /// Other stats, and the hashes of files the stat cache does not know,
    /// are taken outside the lock: a check off the loop may be hashing a
    /// large one while the loop records another node.
    public func currentEntries(node index: Int?, of dependencies: [(path: String, hash: ContentHash)]) -> [Manifest.Entry]? {
        let count = dependencies.count
        var entries = [Manifest.Entry?](repeating: nil, count: count)
        var files = [ScannedFile?](repeating: nil, count: count)
        /// Per file: its stat came from the memo (taken earlier in the run).
        var fromMemo = [Bool](repeating: false, count: count)
        /// Files the stat cache does not know, to be hashed.
        var unknown: [Int] = []
        var isUnknown = [Bool](repeating: false, count: count)
        /// The node's last success's manifest: a file with the stat it has
        /// there (and not racy) has its hash, as `entry(for:old:)` trusts
        /// it, so an edit's check of a dozen entries does not ask the
        /// store's stat cache about each header they list (past
        /// `StatCache.lookupLimit` questions it reads the whole table).
        var previous: [String: Manifest.Entry] = [:]
        /// Asks the manifest, then the stat cache, about the files stat'ed so far; false when one has another hash.
        func lookUp(_ cache: StatCache, _ indices: Range<Int>) -> Bool {
            for i in indices {
                guard let file = files[i], entries[i] == nil, !isUnknown[i] else { continue }
                if let old = previous[file.path], old.stat == file.stat, !old.racy {
                    cache.countReused()
                    if old.hash != dependencies[i].hash { return false }
                    entries[i] = old
                    continue
                }
                guard let known = cache.known(file) else {
                    unknown.append(i)
                    isUnknown[i] = true
                    continue
                }
                if known.hash != dependencies[i].hash { return false }
                entries[i] = Manifest.Entry(path: file.path, stat: known.stat, racy: known.racy, hash: known.hash)
            }
            return true
        }
        // First, under the lock, the files the memo knows (all of them, once
        // a few entries have been restored); a node the memo does not serve
        // skips to the stats.
        var missing: [Int] = []
        let served: Bool? = lock.withLock { _ in
            if let index, let stored = storedLocked(nodeLocked(index).name) {
                for entry in stored.fingerprint.manifest.entries { previous[entry.path] = entry }
            }
            guard let index, memoServesLocked(index) else { return false }
            for i in 0..<count {
                guard let answer = stats.known(dependencies[i].path) else { missing.append(i); continue }
                guard let found = answer, found.1 == .file else { return nil }
                files[i] = ScannedFile(path: dependencies[i].path, stat: found.0)
                fromMemo[i] = true
            }
            return lookUp(loadedCache(), 0..<count) ? true : nil
        }
        guard let served else { return nil }
        if !served { missing = Array(0..<count) }
        // The rest stat'ed outside the lock, then asked (and kept in the memo when it serves).
        var taken: [(FileStat, FileStat.Kind)?] = []
        taken.reserveCapacity(missing.count)
        for i in missing {
            let found = FileStat.of(scanner.fullPath(dependencies[i].path))
            guard let found, found.1 == .file else { return nil }
            taken.append(found)
            files[i] = ScannedFile(path: dependencies[i].path, stat: found.0)
        }
        var cache: StatCache?
        if !missing.isEmpty {
            cache = lock.withLock { _ in
                dependencyStats += taken.count
                if served { for (i, found) in zip(missing, taken) { stats.record(dependencies[i].path, found) } }
                let loaded = loadedCache()
                return lookUp(loaded, 0..<count) ? loaded : nil
            }
            guard cache != nil else { return nil }
        }
        if !unknown.isEmpty {
            for i in unknown {
                guard var file = files[i] else { return nil }
                // A stat from the memo may be older than the content about to be
                // read: the hash is kept with a stat taken now (as `entry(for:old:)` does).
                if fromMemo[i] {
                    guard let now = FileStat.of(scanner.fullPath(file.path)), now.1 == .file else { return nil }
                    file.stat = now.0
                    files[i] = file
                }
                let hashedAt = FileStat.nowNanoseconds()
                guard let hash = ContentHash.ofFile(scanner.fullPath(file.path), shouldStop: shouldStop) else { return nil }
                entries[i] = Manifest.Entry(path: file.path, stat: file.stat, racy: file.stat.isRacy(hashedAt: hashedAt), hash: hash)
            }
            lock.withLock { _ in
                let loaded = cache ?? loadedCache()
                for i in unknown { if let file = files[i], let entry = entries[i] { loaded.add(file, entry.hash, racy: entry.racy) } }
            }
        }
        var result: [Manifest.Entry] = []
        result.reserveCapacity(count)
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
