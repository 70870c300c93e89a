import Foundation
import MoonGraph

/// A depfile node's dependencies after a success, and the paths they are
/// kept under (relative to the graph file's directory).
extension IncrementalState {

    /// After a success of depfile node `index`: its depfile's files, relative
    /// to the graph file's directory, and the fingerprint with them as its
    /// dependencies (nil deps: the depfile could not be read or parsed, a
    /// warning said so, and the node is not up to date next time).
    func withDepfile(_ index: Int, _ fingerprint: NodeFingerprint, _ pending: PendingDepfile)
        -> (NodeFingerprint, [String]?) {
        let node = nodeLocked(index)
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
}
