import Foundation
import Testing
@testable import MoonState

/// A no-op's snapshot of the node states and durations (`NoopSnapshot`):
/// read instead of the store only while the store's files and its WAL
/// index's header are as they were, never made of files written within the
/// racy window unless that header pins them, and no snapshot at all when it
/// does not parse.
@Suite struct NoopSnapshotTests {
    static let graph = "moon.yaml"
    /// A moment well after any file of the test was written (ns).
    static let later = NoopSnapshot.now() + 3_600_000_000_000

    func hash(_ byte: UInt8) -> ContentHash { ContentHash(bytes: [UInt8](repeating: byte, count: 32))! }

    func state(_ n: UInt8) -> StoredNode {
        let manifest = Manifest(entries: [Manifest.Entry(path: "src/f\(n).c", stat: FileStat(size: 3, mtimeNanoseconds: 42, inode: 7),
                                                         racy: false, hash: hash(n))])
        let fingerprint = NodeFingerprint(command: hash(1), environment: hash(2), needs: hash(3), sources: hash(4), manifest: manifest)
        return StoredNode(fingerprint: fingerprint, outputs: [("build/f\(n).o", "abc")], values: ["v\(n)"],
                          updatedAt: Date(timeIntervalSince1970: 1_700_000_000.25), deps: ["include/h\(n).h"])
    }

    /// A store with two node states and their durations.
    func filled() throws -> (TempTree, StateStore) {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.saveNodeStates(graph: Self.graph, [("a", state(1)), ("b", state(2))], files: [:])
        var run = RunRecord(graph: Self.graph, startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 9, ok: true)
        run.nodes = [NodeRunRecord(node: "a", startedAt: run.startedAt, durationMilliseconds: 7, result: .succeeded, attempts: 1)]
        try store.record(run)
        return (tree, store)
    }

    func same(_ a: StoredNode?, _ b: StoredNode?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.fingerprint == b.fingerprint && a.outputs.map { [$0.0, $0.1] } == b.outputs.map { [$0.0, $0.1] } && a.values == b.values
            && a.updatedAt == b.updatedAt && a.listed == b.listed && a.patterns == b.patterns
    }

    @Test func aSnapshotReadsAsTheStore() throws {
        let (tree, store) = try filled()
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(fromSnapshot.snapshot != nil)
        let snapshotStates = try fromSnapshot.nodeStates(graph: Self.graph)
        let storeStates = try store.nodeStates(graph: Self.graph)
        #expect(Set(snapshotStates.keys) == ["a", "b"])
        for name in ["a", "b"] { #expect(same(snapshotStates[name], storeStates[name]), "\(name)") }
        #expect(try fromSnapshot.lastDurations(graph: Self.graph) == (try store.lastDurations(graph: Self.graph)))
        // Anything else opens the store itself.
        #expect(try fromSnapshot.recentRuns(graph: Self.graph, limit: 5).count == 1)
        // Another graph of the directory has no snapshot of its own.
        #expect(StateStore.open(graphDirectory: tree.root, noopSnapshot: "other.yaml").store?.snapshot == nil)
    }

    /// The snapshot keeps the largest peak of the graph's newest runs in the
    /// store, so that learning's bound (`recentPeak`) opens no SQLite; the
    /// journal's runs count too. A run recorded without a peak (an older
    /// moon's) leaves the snapshot none, and the bound unknown.
    @Test func aSnapshotKeepsTheStoresPeak() throws {
        let (tree, store) = try filled()
        var big = RunRecord(graph: Self.graph, startedAt: Date(timeIntervalSince1970: 2000), durationMilliseconds: 9, ok: true)
        big.nodes = [NodeRunRecord(node: "b", startedAt: big.startedAt, durationMilliseconds: 7, result: .succeeded, attempts: 1,
                                   cpuMilliseconds: 1, maxRSSBytes: 5 << 20)]
        try store.record(big)
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(fromSnapshot.snapshot?.peak == 5 << 20)
        #expect(fromSnapshot.recentPeak(graph: Self.graph, limit: LearnedResources.searched) == 5 << 20)
        var journaled = big
        journaled.startedAt = Date(timeIntervalSince1970: 3000)
        journaled.nodes[0].maxRSSBytes = 7 << 20
        #expect(HistoryJournal.append(journaled, store: store.path))
        #expect(fromSnapshot.recentPeak(graph: Self.graph, limit: LearnedResources.searched) == 7 << 20)
        #expect(!fromSnapshot.hasOpenedDatabase, "the bound opened SQLite")

        try store.db.write { try $0.execute(sql: "UPDATE runs SET peak = NULL WHERE peak = 0") }
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let older = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(older.snapshot != nil && older.snapshot?.peak == nil)
        #expect(older.recentPeak(graph: Self.graph, limit: LearnedResources.searched) == nil)
    }

    /// A node that starts is marked unfinished in the store: the snapshot
    /// taken before no longer stands, and the node is not up to date.
    @Test func aWriteAfterTheSnapshotVoidsIt() throws {
        let (tree, store) = try filled()
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        try store.markUnfinished(graph: Self.graph, nodes: ["a"])
        let opened = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(opened.snapshot == nil)
        #expect(try opened.nodeStates(graph: Self.graph)["a"]?.fingerprint.combined == .zero)
    }

    /// Without the WAL index's header (no `-shm` to read), at a moment 50 ms
    /// after the store's last write no snapshot is kept; 150 ms after, one is.
    @Test func withoutTheWALIndexFilesWrittenWithinTheRacyWindowGetNoSnapshot() throws {
        let (tree, store) = try filled()
        #expect(NoopSnapshot.stamps(store: store.path)[2].exists)
        #expect(unlink(store.path + "-shm") == 0)
        #expect(!NoopSnapshot.stamps(store: store.path)[2].exists)
        let lastWrite = try #require(NoopSnapshot.stamps(store: store.path).filter(\.exists).map(\.mtime).max())
        #expect(!store.saveNoopSnapshot(graph: Self.graph, now: lastWrite + 50_000_000))
        #expect(!FileManager.default.fileExists(atPath: tree.path(".moon/noop/moon.yaml")))
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: lastWrite + 150_000_000))
        // Rows a run reads of such files are not kept either, until they settle.
        store.keepRows(of: Self.graph)
        _ = try store.nodeStates(graph: Self.graph)
        #expect(store.rowsRead(graph: Self.graph) == nil)
        settle(store)
        _ = try store.nodeStates(graph: Self.graph)
        #expect(store.rowsRead(graph: Self.graph) != nil)
    }

    /// The run that wrote the store leaves a snapshot at once (the WAL
    /// index's header pins its last commit), which reads as the store.
    @Test func theRunThatWroteLeavesASnapshot() throws {
        let (tree, store) = try filled()
        let lastWrite = try #require(NoopSnapshot.stamps(store: store.path).filter(\.exists).map(\.mtime).max())
        #expect(store.changedHere)
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: lastWrite + 1_000_000))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(fromSnapshot.snapshot != nil)
        let storeStates = try store.nodeStates(graph: Self.graph)
        for name in ["a", "b"] { #expect(same(try fromSnapshot.nodeStates(graph: Self.graph)[name], storeStates[name]), "\(name)") }
        #expect(try fromSnapshot.lastDurations(graph: Self.graph) == ["a": 7])
        // A run that read it and then wrote leaves a new one, read from the store, not from itself.
        try fromSnapshot.markUnfinished(graph: Self.graph, nodes: ["b"])
        #expect(fromSnapshot.saveNoopSnapshot(graph: Self.graph, now: lastWrite + 2_000_000))
        let next = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(next.snapshot != nil)
        #expect(try next.nodeStates(graph: Self.graph)["b"]?.fingerprint.combined == .zero)
        #expect(try next.nodeStates(graph: Self.graph)["a"]?.fingerprint.combined != .zero)
    }

    /// Every commit changes the WAL index's header, whatever the files'
    /// sizes and times; a header whose two copies differ (a commit being
    /// written) is none.
    @Test func everyCommitChangesTheWALIndexStamp() throws {
        let (tree, store) = try filled()
        var seen = [NoopSnapshot.Stamp(walIndexOf: store.path)]
        for step in 0..<3 {
            if step < 2 {
                try store.markUnfinished(graph: Self.graph, nodes: [step == 0 ? "a" : "b"])
            } else {
                try store.saveNodeStates(graph: Self.graph, [("a", state(1))], files: [:])
            }
            let now = NoopSnapshot.Stamp(walIndexOf: store.path)
            #expect(now.exists && !seen.contains(now), "\(step)")
            seen.append(now)
        }
        var torn = [UInt8](repeating: 0, count: 96)
        torn[12] = 1
        torn[48 + 12] = 1
        torn[16] = 1
        try Data(torn).write(to: URL(fileURLWithPath: tree.path("fake.db-shm")))
        #expect(!NoopSnapshot.Stamp(walIndexOf: tree.path("fake.db")).exists)
        torn[48 + 16] = 1
        try Data(torn).write(to: URL(fileURLWithPath: tree.path("fake.db-shm")))
        let whole = NoopSnapshot.Stamp(walIndexOf: tree.path("fake.db"))
        #expect(whole.exists)
        // The change counter and the header's own checksum, which SQLite's recovery resets, are not kept.
        for byte in [8, 40] {
            torn[byte] ^= 0x5a
            torn[48 + byte] ^= 0x5a
        }
        try Data(torn).write(to: URL(fileURLWithPath: tree.path("fake.db-shm")))
        #expect(NoopSnapshot.Stamp(walIndexOf: tree.path("fake.db")) == whole)
        // Not a regular file: none.
        try FileManager.default.removeItem(atPath: tree.path("fake.db-shm"))
        #expect(mkfifo(tree.path("fake.db-shm"), 0o644) == 0)
        #expect(!NoopSnapshot.Stamp(walIndexOf: tree.path("fake.db")).exists)
    }

    /// A snapshot read from one is not written again; a read-only store writes none.
    @Test func aSnapshotIsNotRewrittenFromItself() throws {
        let (tree, store) = try filled()
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(!fromSnapshot.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false).store)
        #expect(!reader.saveNoopSnapshot(graph: Self.graph, now: Self.later))
    }

    /// Dates the store's files back to a fixed moment long past, as files a run finds settled are.
    func settle(_ store: StateStore) {
        for file in [store.path, store.path + "-wal"] {
            let past = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, file, past, 0)
        }
    }

    /// A run that read the node states of settled files and wrote nothing
    /// saves the rows it read, not a second read of them; the snapshot reads as the store.
    @Test func aNoOpSavesTheRowsItRead() throws {
        let (tree, filledStore) = try filled()
        settle(filledStore)
        // A run's store: opened for the graph's snapshot (none yet).
        let store = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(store.snapshot == nil)
        let read = try store.nodeStates(graph: Self.graph)
        #expect(store.rowsRead(graph: Self.graph) != nil)
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(fromSnapshot.snapshot != nil)
        let snapshotStates = try fromSnapshot.nodeStates(graph: Self.graph)
        #expect(Set(snapshotStates.keys) == ["a", "b"])
        for name in ["a", "b"] { #expect(same(snapshotStates[name], read[name]), "\(name)") }
    }

    /// Rows read before another moon wrote the store are not saved, even
    /// with the files dated back again: the snapshot holds the store as it is.
    @Test func rowsReadBeforeAnotherWriteAreNotSaved() throws {
        let (tree, filledStore) = try filled()
        settle(filledStore)
        let store = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        _ = try store.nodeStates(graph: Self.graph)
        #expect(store.rowsRead(graph: Self.graph) != nil)
        let other = try #require(StateStore.open(graphDirectory: tree.root).store)
        try other.markUnfinished(graph: Self.graph, nodes: ["a"])
        settle(store)
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let fromSnapshot = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        #expect(fromSnapshot.snapshot != nil)
        #expect(try fromSnapshot.nodeStates(graph: Self.graph)["a"]?.fingerprint.combined == .zero)
    }

    /// A run of the graph keeps the rows it read (its store's WAL index
    /// pins them); a store opened for anything else (a watch, a status, a
    /// run of another graph), which saves no snapshot of them, keeps none.
    @Test func rowsOfOtherReadersAreNotKept() throws {
        let (tree, filled) = try filled()
        let run = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
        _ = try run.nodeStates(graph: Self.graph)
        #expect(run.rowsRead(graph: Self.graph) != nil)
        settle(filled)
        _ = try filled.nodeStates(graph: Self.graph)
        #expect(filled.rowsRead(graph: Self.graph) == nil)
        let other = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: "other.yaml").store)
        _ = try other.nodeStates(graph: Self.graph)
        #expect(other.rowsRead(graph: Self.graph) == nil)
    }

    /// Every truncation of a sound snapshot, and garbage, is no snapshot, never a trap.
    @Test func aDamagedSnapshotIsNone() throws {
        let (tree, store) = try filled()
        #expect(store.saveNoopSnapshot(graph: Self.graph, now: Self.later))
        let path = tree.path(".moon/noop/moon.yaml")
        let sound = try Data(contentsOf: URL(fileURLWithPath: path))
        var damaged: [Data] = stride(from: 0, to: sound.count, by: max(1, sound.count / 97)).map { sound.prefix($0) }
        damaged.append(Data(repeating: 0xff, count: 4096))
        var flipped = sound
        flipped[flipped.count / 2] ^= 0xff
        damaged.append(flipped)
        for bytes in damaged {
            try bytes.write(to: URL(fileURLWithPath: path))
            let opened = try #require(StateStore.open(graphDirectory: tree.root, noopSnapshot: Self.graph).store)
            #expect(opened.snapshot == nil, "\(bytes.count) bytes")
            #expect(try opened.nodeStates(graph: Self.graph).count == 2)
        }
    }
}

/// A snapshot says which nodes are up to date: one in a directory another
/// user could write (a cloned repository's `.moon/noop` as a link to a
/// shared directory, or a group- or world-writable one) is neither read nor written.
@Suite struct NoopSnapshotPlantingTests {
    @Test func aLinkedOrSharedSnapshotDirectoryIsNotUsed() throws {
        let suite = NoopSnapshotTests()
        let (tree, store) = try suite.filled()
        let shared = try TempTree()
        try FileManager.default.createSymbolicLink(atPath: tree.path(".moon/noop"), withDestinationPath: shared.root)
        #expect(!store.saveNoopSnapshot(graph: NoopSnapshotTests.graph, now: NoopSnapshotTests.later))
        #expect(!FileManager.default.fileExists(atPath: shared.path("moon.yaml")))
        // A sound snapshot, planted where the link leads, is not read.
        try FileManager.default.removeItem(atPath: tree.path(".moon/noop"))
        #expect(store.saveNoopSnapshot(graph: NoopSnapshotTests.graph, now: NoopSnapshotTests.later))
        try FileManager.default.copyItem(atPath: tree.path(".moon/noop/moon.yaml"), toPath: shared.path("moon.yaml"))
        try FileManager.default.removeItem(atPath: tree.path(".moon/noop"))
        try FileManager.default.createSymbolicLink(atPath: tree.path(".moon/noop"), withDestinationPath: shared.root)
        #expect(StateStore.open(graphDirectory: tree.root, noopSnapshot: NoopSnapshotTests.graph).store?.snapshot == nil)
        // Nor in a directory others may write.
        try FileManager.default.removeItem(atPath: tree.path(".moon/noop"))
        #expect(store.saveNoopSnapshot(graph: NoopSnapshotTests.graph, now: NoopSnapshotTests.later))
        chmod(tree.path(".moon/noop"), 0o777)
        #expect(StateStore.open(graphDirectory: tree.root, noopSnapshot: NoopSnapshotTests.graph).store?.snapshot == nil)
        chmod(tree.path(".moon/noop"), 0o755)
        #expect(StateStore.open(graphDirectory: tree.root, noopSnapshot: NoopSnapshotTests.graph).store?.snapshot != nil)
    }
}
