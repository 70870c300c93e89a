import Foundation
import MoonGraph

/// The fingerprint of a node as it is about to start (`NodeFingerprint`):
/// digests of its command, environment, needs' results and source files.
extension IncrementalState {
    /// The fingerprint of graph node `index` now.
    public func fingerprint(node index: Int, needs: [NeedState]) -> NodeFingerprint {
        return lock.withLock { _ in
            fingerprintLocked(index, needs: needs, previous: nil, stamp: checkStampLocked(nodeLocked(index), needs: needs), scan: nil)
                .fingerprint
        }
    }

    /// The fingerprint of graph node `index`, with what `recordSuccess`
    /// needs to digest its depfile; `previous` (its last success) spares
    /// hashing files whose stat is unchanged, and digesting sources that
    /// are all as they were; `scan`, the files its patterns match when
    /// `check` found them already. Called with the lock held.
    func fingerprintLocked(_ index: Int, needs: [NeedState], previous: StoredNode?, stamp: CheckStamp, scan: SourceScan?) -> Pending {
        let node = nodeLocked(index)
        let sources = sourcesDigest(node, previous: previous, scan: scan)
        let fingerprint = NodeFingerprint(command: Self.commandDigest(node), environment: environmentDigest(node),
                                          needs: Self.needsDigest(needs), sources: sources.digest, manifest: sources.manifest)
        return Pending(fingerprint: fingerprint, depfile: sources.depfile, complete: sources.complete, unnamable: sources.unnamable,
                       stamp: stamp)
    }

    /// What graph node `index` is, apart from its inputs and what every
    /// node shares (`sharedDefinitionStamp`): its command, its own `env`
    /// and its own `vars` (an included node's). `--resume` takes a node
    /// from the last run only when both are unchanged. A stamp (16 hex
    /// digits), not a SHA-256: every run records one for each node.
    public func definitionStamp(node index: Int) -> String {
        return lock.withLock { _ in
            let node = nodeLocked(index)
            func parts<Parts: DigestParts>(_ digest: inout Parts) {
                Self.addCommand(node, to: &digest)
                Self.add(("env", node.env), to: &digest)
                if let vars = node.vars { Self.add(("vars", vars), to: &digest) }
            }
            return Self.stamp("definition", parts, parts)
        }
    }

    /// The environment parts every node shares: the dotenv values, the
    /// graph's `env` and `vars` (after `--set`) and `cache: key:`. A stamp
    /// as `definitionStamp` is: a run of nodes without sources records it,
    /// and a SHA-256 there would be the run's only one (starting the
    /// crypto library's CPU probe and its generic types for it).
    public func sharedDefinitionStamp() -> String {
        func parts<Parts: DigestParts>(_ digest: inout Parts) {
            for part in [("dotenv", graph.dotenvValues), ("env", graph.env), ("vars", graph.vars)] { Self.add(part, to: &digest) }
            digest.add(graph.cache.key.count)
            for part in graph.cache.key { digest.add(part) }
        }
        return Self.stamp("shared-definition", parts, parts)
    }

    /// The stamp (16 hex digits) of what `parts` adds, given once for each
    /// kind of digest: streamed, with no buffer; a definition as long as a
    /// DigestBuilder's block is stamped by the builder, whose value that is.
    private static func stamp(_ label: String, _ streamed: (inout StreamedStamp) -> Void,
                              _ built: (inout DigestBuilder) -> Void) -> String {
        var stamp = StreamedStamp(label)
        streamed(&stamp)
        guard let long = stamp.tooLong else { return StreamedStamp.hex(stamp.value) }
        var digest = DigestBuilder(label, capacity: long)
        built(&digest)
        return StreamedStamp.hex(digest.stamp())
    }

    private static func add<Parts: DigestParts>(_ part: (label: String, variables: Variables), to digest: inout Parts) {
        digest.add(part.label)
        digest.add(part.variables.count)
        for entry in part.variables {
            digest.add(entry.name)
            digest.add(entry.value)
        }
    }

    /// What `check` compares, besides the files, to find graph node
    /// `index` up to date with no digest taken: what its command,
    /// environment and sources digests read of the node and the graph
    /// (`commandDigest`, `environmentDigest`, `patternsKey`) and what its
    /// needs left (`needsDigest`). Called with the lock held.
    func checkStampLocked(_ node: Node, needs: [NeedState]) -> CheckStamp {
        var stamp = CheckStamp("check-1")
        stamp.add(sharedStampLocked())
        Self.addCommand(node, to: &stamp)
        Self.add(("env", node.env), to: &stamp)
        let vars = node.vars ?? graph.vars
        // Without vars a node reads none (reading an undeclared one fails the load).
        let read = vars.isEmpty ? [] : varsReadLocked(node)
        stamp.add(read.count)
        for name in read {
            stamp.add(name)
            stamp.add(vars[name] ?? "")
            let items = vars.items(name)
            stamp.add(items.map { $0.count + 1 } ?? 0)
            for item in items ?? [] { stamp.add(item) }
        }
        for patterns in [node.sources, node.generates] {
            stamp.add(patterns.count)
            for pattern in patterns { stamp.add(pattern) }
        }
        stamp.add(node.depfile.map { "depfile " + $0 } ?? "")
        stamp.add(needs.count)
        for need in needs {
            stamp.add(need.name)
            stamp.add(need.result)
            stamp.add(need.outputs.count)
            // Sorted only when there are several, as `needsDigest` does.
            for (key, value) in need.outputs.count > 1 ? need.outputs.sorted(by: { $0.0 < $1.0 }) : need.outputs {
                stamp.add(key)
                stamp.add(value)
            }
            stamp.add(need.values.count)
            for value in need.values { stamp.add(value) }
        }
        return stamp
    }

    /// What every node's environment digest reads of the graph (dotenv,
    /// `env`, `cache: key:`), stamped once per run.
    private func sharedStampLocked() -> CheckStamp {
        if let sharedStamp { return sharedStamp }
        var stamp = CheckStamp("shared")
        for part in [("dotenv", graph.dotenvValues), ("env", graph.env)] { Self.add(part, to: &stamp) }
        stamp.add(graph.cache.key.count)
        for part in graph.cache.key { stamp.add(part) }
        sharedStamp = stamp
        return stamp
    }

    /// The vars `node` reads, parsed once per template (its instances share its script).
    func varsReadLocked(_ node: Node) -> [String] {
        let template = node.instance?.template ?? node.name
        if let read = varsRead[template] { return read }
        let read = varReads.names(readBy: node)
        varsRead[template] = read
        return read
    }

    /// What the node runs, and where.
    static func commandDigest(_ node: Node) -> ContentHash {
        var command = DigestBuilder("command")
        addCommand(node, to: &command)
        return command.finish()
    }

    private static func addCommand<Parts: DigestParts>(_ node: Node, to command: inout Parts) {
        switch node.action {
        case .shell(let script):
            command.add("shell")
            command.add(node.shell.rawValue)
            command.add(script)
        case .exec(let argv):
            command.add("exec")
            command.add(argv.count)
            for arg in argv { command.add(arg) }
        case .group:
            command.add("group")
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
        command.add(fingerprintedDirectory(node.dir))
        // Which exit codes succeed decides whether a recorded success stands
        // (the default adds nothing, so other fingerprints stay as they were).
        let codes = node.successCodes
        if codes != Node.defaultSuccessCodes {
            command.add("success-codes")
            command.add(codes.count)
            for code in codes { command.add(Int(code)) }
        }
        // An instance's item or matrix values: its script reads them at run
        // time, and its text does not show them.
        if let instance = node.instance {
            command.add("instance")
            command.add(instance.item ?? "")
            command.add(instance.matrix.count)
            for entry in instance.matrix {
                command.add(entry.name)
                command.add(entry.value)
            }
        }
        // The command line's `NAME=VALUE`s and words after `--`: the script
        // reads them, its text does not show them. Nothing is added for a
        // node given none, so its fingerprint is what it was.
        if !node.arguments.isEmpty {
            command.add("arguments")
            command.add(node.arguments.params.count)
            for name in node.arguments.params.keys.sorted() {
                command.add(name)
                command.add(node.arguments.params[name]!)
            }
            command.add(node.arguments.args.count)
            for arg in node.arguments.args { command.add(arg) }
        }
    }

    /// The node's dotenv and `env` values, and the values of the vars it
    /// reads (`VarReads`): a var it never reads is not part of it, so a
    /// `--set` of that var neither reruns it nor misses its cache entry.
    private func environmentDigest(_ node: Node) -> ContentHash {
        var environment = DigestBuilder("environment")
        for (label, variables) in [("dotenv", graph.dotenvValues), ("env", graph.environment(for: node))] {
            environment.add(label)
            environment.add(variables.count)
            for entry in variables {
                environment.add(entry.name)
                environment.add(entry.value)
            }
        }
        let vars = node.vars ?? graph.vars
        let read = varsReadLocked(node)
        environment.add("vars read")
        environment.add(read.count)
        for name in read {
            environment.add(name)
            // (A var the node reads but nothing declares fails the check at load.)
            environment.add(vars[name] ?? "")
            let items = vars.items(name)
            environment.add(items.map { $0.count + 1 } ?? 0)
            for item in items ?? [] { environment.add(item) }
        }
        // `cache: key:` (a compiler version…): only when set, so that
        // graphs without it keep their fingerprints.
        if !graph.cache.key.isEmpty {
            environment.add("cache-key")
            environment.add(graph.cache.key.count)
            for part in graph.cache.key { environment.add(part) }
        }
        return environment.finish()
    }

    /// What the node's needs left it: results, outputs and values.
    static func needsDigest(_ needs: [NeedState]) -> ContentHash {
        var digest = DigestBuilder("needs")
        digest.add(needs.count)
        for need in needs {
            digest.add(need.name)
            digest.add(need.result)
            let outputs = need.outputs.sorted { $0.0 < $1.0 }
            digest.add(outputs.count)
            for (key, value) in outputs {
                digest.add(key)
                digest.add(value)
            }
            digest.add(need.values.count)
            for value in need.values { digest.add(value) }
        }
        return digest.finish()
    }

    /// What `sourcesDigest` found.
    private struct Sources {
        var digest: ContentHash
        var manifest: Manifest
        var depfile: PendingDepfile?
        /// Every file it digested is in the manifest (none unreadable or missing).
        var complete: Bool
        /// Files the patterns match whose names are not UTF-8 (shown escaped).
        var unnamable: [String] = []
    }

    /// The node's patterns, the files they match and their content, then
    /// the files its last success's depfile listed.
    private func sourcesDigest(_ node: Node, previous: StoredNode?, scan found: SourceScan?) -> Sources {
        var sources = DigestBuilder("sources")
        var manifest: [Manifest.Entry] = []
        for (label, patterns) in [("sources", node.sources), ("generates", node.generates)] {
            sources.add(label)
            sources.add(patterns.count)
            for pattern in patterns { sources.add(pattern) }
        }
        guard !node.sources.isEmpty else { return Sources(digest: sources.finish(), manifest: Manifest(entries: []), complete: true) }
        let scan = found ?? scanner.scan(matching: node.sources, leavingOut: node.generates, memo: memo)
        let files = scan.files
        manifest.reserveCapacity(files.count + (previous?.deps?.count ?? 0))
        sources.add(files.count)
        var old = OldEntries(previous?.fingerprint.manifest.entries ?? [])
        // A file moon cannot name cannot be hashed: the digest is incomplete
        // (no cache key), and `check` never finds the node up to date.
        var complete = scan.unnamable.isEmpty
        for name in scan.unnamable { sources.add("unnamable:" + name) }
        for file in files {
            sources.add(file.path)
            if let entry = entry(for: file, old: old.next(file.path)) {
                sources.add(entry.hash)
                manifest.append(entry)
            } else {
                Self.addUnreadable(file.stat, to: &sources)
                complete = false
            }
        }
        guard let path = node.depfile else {
            let digest = Self.stands(previous, node, manifest, complete) ?? sources.finish()
            return Sources(digest: digest, manifest: Manifest(entries: manifest), complete: complete, unnamable: scan.unnamable)
        }
        // The files the depfile of the last success listed, after the
        // patterns' (`recordSuccess` digests them again as the new depfile lists them).
        let depfile = PendingDepfile(digest: sources, patternFiles: manifest.count, patternsComplete: complete,
                                     checkedAt: FileStat.fileClockNanoseconds())
        let deps = previous?.deps
        let found = dependencies(deps, old: &old, into: &manifest, complete: &complete)
        if let digest = Self.stands(previous, node, manifest, complete) {
            return Sources(digest: digest, manifest: Manifest(entries: manifest), depfile: depfile, complete: complete,
                           unnamable: scan.unnamable)
        }
        sources.add("depfile")
        sources.add(path)
        if let deps {
            sources.add(deps.count)
            for (dep, state) in zip(deps, found) {
                sources.add(dep)
                switch state {
                case .read(let entry): sources.add(entry.hash)
                case .unreadable(let stat): Self.addUnreadable(stat, to: &sources)
                case .missing: sources.add("missing")
                }
            }
        } else {
            sources.add("unread")
        }
        return Sources(digest: sources.finish(), manifest: Manifest(entries: manifest), depfile: depfile, complete: complete,
                       unnamable: scan.unnamable)
    }

    /// A file the depfile of the last success listed, as found now.
    private enum Dependency {
        case read(Manifest.Entry)
        case unreadable(FileStat)
        case missing
    }

    /// The files the depfile of the last success listed (`deps`), as found
    /// now; each one read joins `manifest`. Without a list, or with a file
    /// missing or unreadable, the digest is not `complete`.
    private func dependencies(_ deps: [String]?, old: inout OldEntries, into manifest: inout [Manifest.Entry],
                              complete: inout Bool) -> [Dependency] {
        guard let deps else {
            complete = false
            return []
        }
        var found: [Dependency] = []
        found.reserveCapacity(deps.count)
        for dep in deps {
            guard let stat = dependencyStat(dep), stat.1 == .file else {
                found.append(.missing)
                complete = false
                continue
            }
            if let entry = entry(for: ScannedFile(path: dep, stat: stat.0), old: old.next(dep)) {
                found.append(.read(entry))
                manifest.append(entry)
            } else {
                found.append(.unreadable(stat.0))
                complete = false
            }
        }
        return found
    }

    /// A file that exists but cannot be read: its stat stands in for its
    /// content, so a change to it still reruns the node (as it would under make).
    private static func addUnreadable(_ stat: FileStat, to digest: inout DigestBuilder) {
        digest.add("unreadable")
        digest.add(Int(stat.size))
        digest.add(Int(stat.mtimeNanoseconds))
        digest.add(String(stat.inode))
    }

    /// The last success's sources digest, when it still stands: it was
    /// taken with the node's present patterns over a complete manifest, and
    /// the files now have the same paths and content hashes in the same
    /// order (the digest is a function of exactly those). Nil: take it anew.
    private static func stands(_ previous: StoredNode?, _ node: Node, _ manifest: [Manifest.Entry], _ complete: Bool) -> ContentHash? {
        guard complete, let previous, let patterns = previous.patterns else { return nil }
        let old = previous.fingerprint.manifest.entries
        guard old.count == manifest.count, patterns == patternsKey(node) else { return nil }
        for (a, b) in zip(old, manifest) where a.hash != b.hash || a.path != b.path { return nil }
        return previous.fingerprint.sources
    }

    /// What a sources digest takes from the node itself, besides its files:
    /// its patterns and depfile, each length-prefixed (stored with the
    /// digest, for `stands`).
    static func patternsKey(_ node: Node) -> Data {
        var out: [UInt8] = []
        func add(_ text: String) {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: text.utf8)
        }
        for patterns in [node.sources, node.generates] {
            add(String(patterns.count))
            for pattern in patterns { add(pattern) }
        }
        add(node.depfile.map { "depfile " + $0 } ?? "")
        return Data(out)
    }

    /// The previous manifest, walked in step with a new scan (same order when
    /// nothing moved); a dictionary only once they disagree.
    fileprivate struct OldEntries {
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
        /// Every file the patterns matched could be read (is in the manifest).
        var patternsComplete: Bool
        /// When the node was checked (wall clock, ns): a dependency written
        /// since then may have changed while the command read it.
        var checkedAt: Int64
    }
}
