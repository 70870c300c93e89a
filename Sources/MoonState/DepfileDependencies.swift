import Foundation
import MoonGraph
import MoonSystem

/// A depfile node's dependencies after a success, and the paths they are
/// kept under (relative to the graph file's directory).
extension IncrementalState {
    /// A depfile larger than this is not read: GCC's for a large unit is a few hundred KB.
    static let maxDepfileSize: Int64 = 64 << 20

    /// After a success of depfile node `index`: its depfile's files, relative
    /// to the graph file's directory, and the fingerprint with them as its
    /// dependencies (nil deps: the depfile could not be read or parsed, a
    /// warning said so, and the node is not up to date next time), and
    /// whether its sources digest covers exactly its manifest's files.
    func withDepfile(_ index: Int, _ fingerprint: NodeFingerprint, _ pending: PendingDepfile)
        -> (NodeFingerprint, [String]?, Bool) {
        let node = nodeLocked(index)
        guard let path = node.depfile else { return (fingerprint, nil, false) }
        let dir = Self.fingerprintedDirectory(node.dir)
        let depfilePath = Self.path(path, in: dir)
        let listed: [String]
        do {
            // Only a regular file, and not past the cap: it is read whole (a FIFO would block the read).
            let found = FileStat.of(scanner.fullPath(depfilePath))
            if let found, found.1 != .file || found.0.size > Self.maxDepfileSize {
                let why = found.1 != .file ? "is not a regular file" : "is larger than \(ByteSize.text(Int64(Self.maxDepfileSize)))"
                onWarning("node '\(node.name)' succeeded but its depfile \(depfilePath) \(why); it runs again next time")
                return (fingerprint, nil, false)
            }
            guard let bytes = LinuxCalls.readRegularFile(scanner.fullPath(depfilePath), limit: Int(Self.maxDepfileSize)) else {
                onWarning("node '\(node.name)' succeeded but its depfile \(depfilePath) cannot be read; it runs again next time")
                return (fingerprint, nil, false)
            }
            listed = try Depfile.parse(bytes)
        } catch {
            onWarning("node '\(node.name)': its depfile \(depfilePath) is malformed (\(error)); it runs again next time")
            return (fingerprint, nil, false)
        }
        var before: [String: Manifest.Entry] = [:]
        for entry in fingerprint.manifest.entries[pending.patternFiles...] { before[entry.path] = entry }
        var taken = Set(fingerprint.manifest.entries[..<pending.patternFiles].map(\.path))
        var deps: [String] = []
        for file in listed {
            let dep = Self.path(file, in: dir)
            if taken.insert(dep).inserted { deps.append(dep) }
        }
        let (updated, complete) = withDependencies(path, fingerprint, pending, deps) { _, dep in
            guard let found = FileStat.of(scanner.fullPath(dep)), found.1 == .file else { return nil }
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
            return entry ?? Manifest.Entry(path: dep, stat: stat, racy: true, hash: .zero)
        }
        return (updated, deps, complete)
    }

    /// After a restore of depfile node `index` from a cache entry: its
    /// dependencies are the entry's, whose files `currentEntries` has just
    /// hashed (the restored depfile lists them; it is not read again).
    func withRestoredDepfile(_ index: Int, _ fingerprint: NodeFingerprint, _ pending: PendingDepfile,
                             _ entries: [Manifest.Entry]) -> (NodeFingerprint, [String]?, Bool) {
        guard let path = nodeLocked(index).depfile else { return (fingerprint, nil, false) }
        let deps = entries.map(\.path)
        let (updated, complete) = withDependencies(path, fingerprint, pending, deps) { i, _ in entries[i] }
        return (updated, deps, complete)
    }

    /// `fingerprint` with `deps` as its depfile's files: the sources digest
    /// goes on from the patterns' files with each dependency's path and
    /// hash (`entry` of its index and path; nil: missing); and whether none was missing (nor a
    /// pattern's file unreadable).
    private func withDependencies(_ path: String, _ fingerprint: NodeFingerprint, _ pending: PendingDepfile, _ deps: [String],
                                  entry: (Int, String) -> Manifest.Entry?) -> (NodeFingerprint, Bool) {
        var complete = pending.patternsComplete
        var sources = pending.digest
        var manifest = Array(fingerprint.manifest.entries[..<pending.patternFiles])
        manifest.reserveCapacity(pending.patternFiles + deps.count)
        sources.add("depfile")
        sources.add(path)
        sources.add(deps.count)
        for (i, dep) in deps.enumerated() {
            sources.add(dep)
            guard let known = entry(i, dep) else {
                sources.add("missing")
                complete = false
                continue
            }
            sources.add(known.hash)
            manifest.append(known)
        }
        return (NodeFingerprint(command: fingerprint.command, environment: fingerprint.environment, needs: fingerprint.needs,
                                sources: sources.finish(), manifest: Manifest(entries: manifest)), complete)
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
}
