/// Stats taken during a run's checks, by path as the graph spells it
/// (relative to its directory, or absolute): a header that 300 depfiles
/// list, or an object a node generates and the archive's glob walks over,
/// is stat'ed once. Its owner (`IncrementalState`) serializes access, and
/// asks it only where no file it knows can have changed since: once a node
/// started, in the checks of nodes that nothing which ran precedes, and
/// never of the files a started node declares (`forget`).
///
/// It is asked once per file every depfile lists, thousands of times in a
/// no-op, so it is one struct of plain arrays (`Table`), probed with a
/// cheap hash of a path's bytes and reached with one access per question:
/// a Dictionary's and a Set's generic lookups and hashing, and a class's
/// per-property exclusivity checks, cost several times as much.
public final class StatMemo {
    private var table = Table()

    public init() {}

    var isEmpty: Bool { table.paths.isEmpty }

    /// Whether it may hold files of the directory `prefix` (`src/`, or "" for
    /// the graph's), so a walk asks about a directory's files only when it
    /// may know some (a false "may" costs only lookups).
    func knowsDirectory(_ prefix: String) -> Bool {
        var prefix = prefix
        let hash = prefix.withUTF8 { Self.hash(UnsafeRawBufferPointer($0)) }
        return table.holdsDirectory(hash)
    }

    /// Room for `count` paths, so that the table does not grow step by step.
    func reserve(_ count: Int) { table.reserve(count) }

    /// The paths the checks will ask about, in about the order they will
    /// (the last successes' manifests): each is added unasked, and when
    /// there are enough to be worth it, a second thread stats them from the
    /// last back meanwhile (`StatPrefetch`). Each is stat'ed once: at its
    /// first question, or by that thread before it.
    func expect(_ paths: [String], _ scanner: SourceScanner) {
        table.expect(paths, scanner)
    }

    /// Whether a thread stats expected paths ahead (`expect`), whether it
    /// returned, and how many paths it left, for the tests.
    var prefetching: (started: Bool, ended: Bool, left: Int) {
        guard let prefetch = table.prefetch else { return (false, true, 0) }
        return (true, prefetch.hasEnded, prefetch.firstTaken)
    }

    /// `stat(2)` of `path` (following links), taken once.
    func stat(_ path: String, _ scanner: SourceScanner) -> (FileStat, FileStat.Kind)? {
        table.stat(path, scanner)
    }

    /// Whether each of `entries` names a regular file whose stat is the one
    /// it holds, and none is racy: the files a depfile listed, asked in one
    /// go (one access to the table, no entry copied out).
    func allUnchanged(_ entries: UnsafeBufferPointer<Manifest.Entry>, _ scanner: SourceScanner) -> Bool {
        table.allUnchanged(entries, scanner)
    }

    /// A stat of `path` its caller took without the owner's lock, kept as
    /// `stat` would have kept it; a path the table holds already (asked,
    /// expected or forgotten) is left as it is.
    func record(_ path: String, _ found: (FileStat, FileStat.Kind)?) {
        table.record(path, found)
    }

    /// What `stat` found of `path`, if it was asked (`.some(nil)`: missing)
    /// and is not forgotten.
    func known(_ path: String) -> (FileStat, FileStat.Kind)?? {
        var path = path
        let hash = path.withUTF8 { Self.hash(UnsafeRawBufferPointer($0)) }
        guard let index = table.find(path, hash).index, !table.volatile[index] else { return nil }
        guard !table.unasked[index] || table.takePrefetched(index) else { return nil }
        return .some(table.found[index])
    }

    /// `stat(2)` of `path` now: as spelt when absolute, or relative to the
    /// current directory when the graph's is that ("" is the graph's
    /// directory itself: `fullPath` says which).
    static func statNow(_ path: String, _ scanner: SourceScanner) -> (FileStat, FileStat.Kind)? {
        let spelt = path.utf8.first
        let asSpelt = spelt == UInt8(ascii: "/") || (spelt != nil && scanner.root == ".")
        return FileStat.of(asSpelt ? path : scanner.fullPath(path))
    }

    /// The files of `pattern` (a started node's `generates`) may change
    /// from now on: each question about them stats afresh, and no answer is
    /// kept. A glob forgets every path below its base directory.
    func forget(_ pattern: String) {
        let glob = Glob(pattern)
        if glob.isLiteral {
            // A directory's path means every file below it.
            if case .some(.some((_, .directory))) = known(glob.base) { table.forget(below: glob.base) }
            table.forget(path: glob.base)
        } else {
            table.forget(below: glob.base)
        }
    }

    /// Whether it may answer once nodes have started: false once more
    /// directories were forgotten than `volatileDirectoryLimit` (each is a
    /// walk over the table, and a prefix each later miss is compared with).
    var servesAfterStart: Bool { table.volatileDirectories.count <= Self.volatileDirectoryLimit }
    static let volatileDirectoryLimit = 16

    /// Stats taken (not answered from the table), for the tests.
    var taken: Int { table.taken }

    /// A 64-bit hash of bytes, a word at a time, never 0 (only for this
    /// table: not stable across versions, never stored).
    static func hash(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        let k: UInt64 = 0x9e37_79b9_7f4a_7c15
        var h = UInt64(raw.count) &* k
        var i = 0
        while i + 8 <= raw.count {
            h = (h ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))) &* k
            h ^= h >> 32
            i += 8
        }
        let rest = raw.count - i
        if rest > 0 {
            var tail: UInt64 = 0
            if raw.count >= 8 {
                // The last word, overlapping the one before, shifted down to the bytes it adds.
                tail = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self)) >> UInt64(8 * (8 - rest))
            } else {
                for j in 0..<rest { tail |= UInt64(raw[j]) << UInt64(8 * j) }
            }
            h = (h ^ tail) &* k
            h ^= h >> 32
        }
        return h == 0 ? 1 : h
    }

    /// Open addressing with linear probing: `slots` holds 1 + an index into
    /// the entry arrays (0: empty), `directorySlots` the hashes of the
    /// paths' directories (0: empty); each kept at most half full.
    struct Table {
        var slots: [Int32] = []
        var hashes: [UInt64] = []
        var paths: [String] = []
        var found: [(FileStat, FileStat.Kind)?] = []
        /// Per entry: forgotten (`forget`), so asked afresh each time.
        var volatile: [Bool] = []
        /// Per entry: expected (`expect`) and not stat'ed yet; `found` holds nothing.
        var unasked: [Bool] = []
        /// The thread stat-ing the expected entries from `prefetchFirst` on, until they are asked.
        var prefetch: StatPrefetch?
        var prefetchFirst = 0
        /// Directories (`dir/`, or "" for all) whose files are forgotten, old and new.
        var volatileDirectories: [String] = []
        var taken = 0
        var directorySlots: [UInt64] = Array(repeating: 0, count: 16)
        var directoryCount = 0
        /// The directory last added (most paths a depfile lists share one).
        var lastDirectory: UInt64 = 0

        mutating func reserve(_ count: Int) {
            hashes.reserveCapacity(count)
            paths.reserveCapacity(count)
            found.reserveCapacity(count)
            volatile.reserveCapacity(count)
            unasked.reserveCapacity(count)
            if slots.count < 2 * count { rehash(capacity: 2 * count) }
        }

        mutating func stat(_ path: String, _ scanner: SourceScanner) -> (FileStat, FileStat.Kind)? {
            var path = path
            let (hash, spelt) = path.withUTF8 { (StatMemo.hash(UnsafeRawBufferPointer($0)), $0.first) }
            let (slot, index) = find(path, hash)
            if let index {
                if volatile[index] { return fresh(path, spelt, scanner) }
                if unasked[index] { answer(index, path, spelt, scanner) }
                return found[index]
            }
            let now = fresh(path, spelt, scanner)
            if !volatileDirectories.isEmpty, volatileDirectories.contains(where: { path.hasPrefix($0) }) { return now }
            insert(path, hash, now, at: slot)
            addDirectory(of: path)
            return now
        }

        mutating func record(_ path: String, _ found: (FileStat, FileStat.Kind)?) {
            addNew(path, found)
        }

        /// Adds `path` with `value` unless the table holds it (asked,
        /// expected or forgotten) or a forgotten directory holds it; whether it did.
        @discardableResult
        mutating func addNew(_ path: String, _ value: (FileStat, FileStat.Kind)?) -> Bool {
            var path = path
            let hash = path.withUTF8 { StatMemo.hash(UnsafeRawBufferPointer($0)) }
            let (slot, index) = find(path, hash)
            guard index == nil else { return false }
            if !volatileDirectories.isEmpty, volatileDirectories.contains(where: { path.hasPrefix($0) }) { return false }
            insert(path, hash, value, at: slot)
            addDirectory(of: path)
            return true
        }

        mutating func addDirectory(of path: String) {
            var path = path
            let directory = path.withUTF8 { bytes -> UInt64 in
                var end = bytes.count
                while end > 0, bytes[end - 1] != UInt8(ascii: "/") { end -= 1 }
                return StatMemo.hash(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[0..<end])))
            }
            if directory != lastDirectory { addDirectory(directory) }
        }

        /// Stats the expected entry `index` at its first question, or takes
        /// the prefetching thread's stat of it. The entries are asked about
        /// in about the order they were added, and the thread goes from the
        /// last back: the first entry asked that it took means the two
        /// met, and it stops (what it took is still taken from it).
        private mutating func answer(_ index: Int, _ path: String, _ spelt: UInt8?, _ scanner: SourceScanner) {
            if takePrefetched(index) {
                prefetch?.stop()
                return
            }
            found[index] = fresh(path, spelt, scanner)
            unasked[index] = false
        }

        /// Takes the prefetching thread's stat of the unasked entry `index`, if it has one.
        mutating func takePrefetched(_ index: Int) -> Bool {
            guard let prefetch, index >= prefetchFirst, index - prefetchFirst >= prefetch.firstTaken else { return false }
            found[index] = prefetch.stat(at: index - prefetchFirst)
            unasked[index] = false
            return true
        }

        /// Adds `paths` unasked (those not there yet), and starts a thread
        /// stat-ing the later part of them when there are enough.
        mutating func expect(_ paths: [String], _ scanner: SourceScanner) {
            guard prefetch == nil else { return }
            let first = self.paths.count
            for path in paths where addNew(path, nil) {
                unasked[unasked.count - 1] = true
            }
            guard self.paths.count - first >= StatPrefetch.minimumPaths else { return }
            prefetch = StatPrefetch(paths: Array(self.paths[first...]), scanner: scanner)
            prefetchFirst = first
        }

        /// `stat(2)` of `path` now: as spelt when absolute, or relative to the
        /// current directory when the graph's is that ("" is the graph's
        /// directory itself: `fullPath` says which).
        private mutating func fresh(_ path: String, _ spelt: UInt8?, _ scanner: SourceScanner) -> (FileStat, FileStat.Kind)? {
            // As `StatMemo.statNow`, with the first byte at hand.
            taken += 1
            let asSpelt = spelt == UInt8(ascii: "/") || (spelt != nil && scanner.root == ".")
            return FileStat.of(asSpelt ? path : scanner.fullPath(path))
        }

        mutating func forget(path: String) {
            var path = path
            let hash = path.withUTF8 { StatMemo.hash(UnsafeRawBufferPointer($0)) }
            let (slot, index) = find(path, hash)
            if let index {
                volatile[index] = true
            } else {
                insert(path, hash, nil, at: slot)
                volatile[volatile.count - 1] = true
            }
        }

        mutating func forget(below directory: String) {
            let prefix = directory.isEmpty || directory.hasSuffix("/") ? directory : directory + "/"
            guard !volatileDirectories.contains(where: { prefix.hasPrefix($0) }) else { return }
            volatileDirectories.append(prefix)
            // Past the limit the memo no longer answers after a start (`servesAfterStart`): no walk is worth it.
            guard volatileDirectories.count <= StatMemo.volatileDirectoryLimit else { return }
            for index in paths.indices where paths[index].hasPrefix(prefix) { volatile[index] = true }
        }

        mutating func allUnchanged(_ entries: UnsafeBufferPointer<Manifest.Entry>, _ scanner: SourceScanner) -> Bool {
            guard let base = entries.baseAddress else { return true }
            for i in 0..<entries.count {
                let entry = base + i
                guard !entry.pointee.racy, let now = stat(entry.pointee.path, scanner), now.1 == .file, now.0 == entry.pointee.stat else {
                    return false
                }
            }
            return true
        }

        /// The slot where `path` is, or where it would go, and its entry's index.
        func find(_ path: String, _ hash: UInt64) -> (slot: Int, index: Int?) {
            guard !slots.isEmpty else { return (0, nil) }
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let held = Int(slots[slot])
                if held == 0 { return (slot, nil) }
                if hashes[held - 1] == hash, paths[held - 1] == path { return (slot, held - 1) }
                slot = (slot + 1) & mask
            }
        }

        /// Adds `path` at `slot`, as `find` gave it (the table may grow, and then finds its own).
        private mutating func insert(_ path: String, _ hash: UInt64, _ value: (FileStat, FileStat.Kind)?, at slot: Int) {
            hashes.append(hash)
            paths.append(path)
            found.append(value)
            volatile.append(false)
            unasked.append(false)
            if 2 * paths.count > slots.count {
                rehash(capacity: 2 * paths.count)
            } else {
                slots[slot] = Int32(paths.count)
            }
        }

        /// Slots for at least `capacity` (a power of two), every entry placed anew.
        private mutating func rehash(capacity: Int) {
            var size = 64
            while size < capacity { size *= 2 }
            slots = Array(repeating: 0, count: size)
            let mask = size - 1
            for index in hashes.indices {
                var slot = Int(truncatingIfNeeded: hashes[index]) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(index + 1)
            }
        }

        func holdsDirectory(_ hash: UInt64) -> Bool {
            let mask = directorySlots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while directorySlots[slot] != 0 {
                if directorySlots[slot] == hash { return true }
                slot = (slot + 1) & mask
            }
            return false
        }

        private mutating func addDirectory(_ hash: UInt64) {
            lastDirectory = hash
            guard !holdsDirectory(hash) else { return }
            directoryCount += 1
            if 2 * directoryCount > directorySlots.count {
                let held = directorySlots.filter { $0 != 0 }
                directorySlots = Array(repeating: 0, count: 2 * directorySlots.count)
                for old in held { place(old) }
            }
            place(hash)
        }

        private mutating func place(_ hash: UInt64) {
            let mask = directorySlots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while directorySlots[slot] != 0 { slot = (slot + 1) & mask }
            directorySlots[slot] = hash
        }
    }
}
