import Foundation
import GRDB
import GRDBSQLite
import MoonGraph
import Testing
@testable import MoonState

@Suite struct StateStoreTests {
    @Test func aCorruptStoreIsMovedAsideWithAWarning() throws {
        let tree = try TempTree()
        try FileManager.default.createDirectory(atPath: tree.path(".moon"), withIntermediateDirectories: true)
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: tree.path(".moon/state.db")))
        let opened = StateStore.open(graphDirectory: tree.root)
        #expect(opened.store != nil)
        #expect(opened.warning?.contains("corrupt") == true)
        #expect(FileManager.default.fileExists(atPath: tree.path(".moon/state.db.corrupt")))
        #expect(try opened.store?.integrityCheck() == "ok")
    }

    /// moon exits without closing the store: the next run's first connection
    /// finds the last runs in the WAL, with the index of a connection that
    /// is gone, and rebuilds the index from the WAL.
    @Test func aRunLeftInTheWALIsReadAfterTheIndexIsReset() throws {
        let tree = try TempTree()
        let first = try #require(StateStore.open(graphDirectory: tree.root).store)
        try first.changeHere()
        var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 7, ok: true)
        run.nodes = [NodeRunRecord(node: "build", startedAt: run.startedAt, durationMilliseconds: 7, result: .succeeded, attempts: 1)]
        try first.record(run)
        // A copy of the files as an exited moon leaves them: the run only in
        // the WAL, the index of a connection that is gone.
        let copy = try TempTree()
        try FileManager.default.createDirectory(atPath: copy.path(".moon"), withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: tree.path(".moon/state.db" + suffix), toPath: copy.path(".moon/state.db" + suffix))
        }
        let walSize = try FileManager.default.attributesOfItem(atPath: copy.path(".moon/state.db-wal"))[.size] as? Int
        #expect((walSize ?? 0) > 0, "the run is in the WAL")
        let second = try #require(StateStore.open(graphDirectory: copy.root).store)
        let runs = try second.recentRuns(graph: "moon.yaml", limit: 10)
        #expect(runs.count == 1)
        #expect(runs.first?.nodes.map(\.node) == ["build"])
    }

    /// A store made now is given its tables without a sync, then commits
    /// and checkpoints as any other (`synchronous = NORMAL`, 1), also when
    /// opened again.
    @Test func aNewStoreSyncsAsAnyOtherOnceMade() throws {
        let tree = try TempTree()
        for _ in 0..<2 {
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            let level = try store.db.read { try StateStore.firstValue($0, sql: "PRAGMA synchronous") }
            #expect(Int.fromDatabaseValue(level) == 1)
            #expect(try store.integrityCheck() == "ok")
        }
    }

    /// A store made now has 16 KiB pages; one made with SQLite's 4 KiB
    /// keeps them, and is read and written as before.
    @Test func aNewStoreHasLargePagesAndAnOldOneKeepsItsOwn() throws {
        let tree = try TempTree()
        let made = try #require(StateStore.open(graphDirectory: tree.root).store)
        #expect(Int.fromDatabaseValue(try made.db.read { try StateStore.firstValue($0, sql: "PRAGMA page_size") }) == StateStore.pageSize)
        let old = try TempTree()
        try FileManager.default.createDirectory(atPath: old.path(".moon"), withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: old.path(".moon/state.db"))
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL") }
        try queue.close()
        let opened = try #require(StateStore.open(graphDirectory: old.root).store)
        #expect(Int.fromDatabaseValue(try opened.db.read { try StateStore.firstValue($0, sql: "PRAGMA page_size") }) == 4096)
        var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 7, ok: true)
        run.nodes = [NodeRunRecord(node: "build", startedAt: run.startedAt, durationMilliseconds: 7, result: .succeeded, attempts: 1)]
        try opened.changeHere()
        try opened.record(run)
        #expect(try opened.integrityCheck() == "ok")
    }

    /// A read leaves the connection's prepared statements valid: reading
    /// through GRDB's `read` set `PRAGMA query_only` around it, which
    /// expired every statement, so each look-up compiled its SQL again.
    @Test func aReadDoesNotMakeTheStoreCompileItsStatementsAgain() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        let entry = StatCache.Entry(stat: FileStat(size: 3, mtimeNanoseconds: 5, inode: 7), hash: try #require(ContentHash(bytes: [UInt8](repeating: 7, count: 32))), racy: false)
        try store.saveFileCache(["a.c": entry])
        for _ in 0..<3 { #expect(try store.fileCacheEntry("a.c") == entry) }
        _ = try store.nodeStates(graph: "moon.yaml")
        #expect(try store.fileCacheEntry("b.c") == nil)
        let sql = "SELECT size, mtime_ns, inode, hash, racy FROM files WHERE path = ?"
        let reprepared = try store.db.writeWithoutTransaction { db in
            sqlite3_stmt_status(try db.cachedStatement(sql: sql).sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0)
        }
        #expect(reprepared == 0)
    }

    @Test func aStoreThatCannotBeCreatedGivesAWarning() throws {
        let tree = try TempTree()
        // `.moon` is a file: the directory cannot be made.
        try tree.write(".moon", "in the way")
        let opened = StateStore.open(graphDirectory: tree.root)
        #expect(opened.store == nil)
        #expect(opened.warning != nil)
    }

    @Test func withoutCreateAMissingStoreIsNil() throws {
        let tree = try TempTree()
        let opened = StateStore.open(graphDirectory: tree.root, create: false)
        #expect(opened.store == nil && opened.warning == nil)
        #expect(!FileManager.default.fileExists(atPath: tree.path(".moon")))
    }

    @Test func historyKeepsRunsAndDurations() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        for (i, ms) in [100, 300].enumerated() {
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: Double(1000 + i)), durationMilliseconds: ms, ok: true)
            run.succeeded = 1
            run.nodes = [NodeRunRecord(node: "build", startedAt: run.startedAt, durationMilliseconds: ms, result: .succeeded, attempts: 2),
                         NodeRunRecord(node: "gen", result: .upToDate)]
            try store.record(run)
        }
        let runs = try store.recentRuns(graph: "moon.yaml", limit: 10)
        #expect(runs.map(\.durationMilliseconds) == [300, 100])
        #expect(runs[0].nodes.first { $0.node == "build" }?.attempts == 2)
        #expect(runs[0].nodes.first { $0.node == "gen" }?.result == .upToDate)
        #expect(try store.lastDurations(graph: "moon.yaml") == ["build": 300])
        #expect(try store.recentRuns(graph: "other.yaml", limit: 10).isEmpty)
    }

    /// moon exits without closing its connection, and the next process's
    /// first connection rebuilds the WAL's index from the WAL: the opening
    /// checkpoints a WAL past `walCheckpointSize`, so that run's writes
    /// start it afresh and no start reads an ever longer one. Each round
    /// here is a new process: the files copied, as an exited moon leaves them.
    @Test func theWALStaysShortRunAfterRun() throws {
        var tree = try TempTree()
        var largest = 0
        for round in 0..<40 {
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            try store.changeHere()
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 5, ok: true)
            run.nodes = (0..<1500).map { NodeRunRecord(node: "node-with-a-longer-name-\($0)", result: .upToDate) }
            try store.record(run)
            let wal = try FileManager.default.attributesOfItem(atPath: tree.path(".moon/state.db-wal"))[.size] as? Int ?? 0
            largest = max(largest, wal)
            if round == 39 {
                #expect(try store.recentRuns(graph: "moon.yaml", limit: 1000).count == 40)
                #expect(try store.integrityCheck() == "ok")
                break
            }
            let next = try TempTree()
            try FileManager.default.createDirectory(atPath: next.path(".moon"), withIntermediateDirectories: true)
            for suffix in ["", "-wal", "-shm"] {
                try FileManager.default.copyItem(atPath: tree.path(".moon/state.db" + suffix), toPath: next.path(".moon/state.db" + suffix))
            }
            tree = next
        }
        // 40 runs of ~75 KB each would leave a WAL of 3 MB and more.
        #expect(largest > 0)
        #expect(largest < StateStore.walCheckpointSize + 200 << 10)
    }

    /// A WAL that once grew past `walCheckpointSize` (a first run that
    /// records a large tree) is cut back at its next start, so the openings
    /// after it checkpoint only when runs have written that much again, not
    /// at every start (each checkpoint syncs the files).
    @Test func aWALThatOnceGrewIsNotCheckpointedAtEveryOpening() throws {
        let tree = try TempTree()
        let big = try #require(StateStore.open(graphDirectory: tree.root).store)
        var first = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 5, ok: true)
        first.nodes = (0..<20_000).map { NodeRunRecord(node: "node-with-a-longer-name-\($0)", result: .upToDate) }
        try big.record(first)
        func database() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: tree.path(".moon/state.db"))) }
        for round in 0..<4 {
            // Each opening is a new connection, as a new moon process makes.
            let before = try database()
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            if round > 0 { #expect(try database() == before, "opening \(round) checkpointed a short WAL") }
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 2000), durationMilliseconds: 5, ok: true)
            run.nodes = [NodeRunRecord(node: "build", result: .upToDate)]
            try store.record(run)
        }
    }

    /// A WAL past `walCheckpointSize` is checkpointed and emptied at the
    /// opening, even when the run then writes nothing (a no-op): its
    /// frames are not copied into the database again by each later
    /// process (whose first connection rebuilds the WAL's index, and so
    /// forgets what was copied), which would change the database's stamp
    /// at every no-op and keep the no-op's snapshot from ever standing.
    @Test func aLargeWALIsEmptiedByAnOpeningThatWritesNothing() throws {
        var tree = try TempTree()
        let big = try #require(StateStore.open(graphDirectory: tree.root).store)
        func walSize(_ tree: TempTree) throws -> Int {
            guard FileManager.default.fileExists(atPath: tree.path(".moon/state.db-wal")) else { return 0 }
            return try FileManager.default.attributesOfItem(atPath: tree.path(".moon/state.db-wal"))[.size] as? Int ?? 0
        }
        for round in 0..<8 where try walSize(tree) <= StateStore.walCheckpointSize {
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000 + Double(round)), durationMilliseconds: 5, ok: true)
            run.nodes = (0..<20_000).map { NodeRunRecord(node: "node-with-a-longer-name-\($0)", result: .upToDate) }
            try big.record(run)
        }
        #expect(try walSize(tree) > StateStore.walCheckpointSize)
        for _ in 0..<2 {
            // A new process: the files as an exited moon leaves them.
            let next = try TempTree()
            try FileManager.default.createDirectory(atPath: next.path(".moon"), withIntermediateDirectories: true)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: tree.path(".moon/state.db" + suffix)) {
                try FileManager.default.copyItem(atPath: tree.path(".moon/state.db" + suffix), toPath: next.path(".moon/state.db" + suffix))
            }
            tree = next
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            #expect(try walSize(tree) == 0, "the opening left its WAL to be copied again")
            #expect(try store.recentRuns(graph: "moon.yaml", limit: 1).count == 1)
        }
    }

    /// The opening's checkpoint never waits for another moon: a reader that
    /// holds its read open (another run reading its node states) leaves
    /// the WAL as it is, and the opening goes on at once, however long
    /// its busy timeout.
    @Test func theOpeningsCheckpointDoesNotWaitForAReader() throws {
        let tree = try TempTree()
        let big = try #require(StateStore.open(graphDirectory: tree.root).store)
        for round in 0..<8 {
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000 + Double(round)), durationMilliseconds: 5, ok: true)
            run.nodes = (0..<20_000).map { NodeRunRecord(node: "node-with-a-longer-name-\($0)", result: .upToDate) }
            try big.record(run)
        }
        // Another process's connection, in the middle of a read.
        var reader: OpaquePointer?
        #expect(sqlite3_open_v2(tree.path(".moon/state.db"), &reader, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(reader) }
        #expect(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK)
        let started = Date()
        let store = StateStore.open(graphDirectory: tree.root, busyTimeout: 30).store
        #expect(store != nil)
        #expect(Date().timeIntervalSince(started) < 10, "the opening waited for the reader")
        #expect(sqlite3_exec(reader, "COMMIT", nil, nil, nil) == SQLITE_OK)
    }

    /// A node weighs its newest success; a new duration within 1 ms or 10%
    /// of the one read at the start leaves the recorded one.
    @Test func durationsAreTheNewestSuccessesWithinATolerance() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.changeHere()
        func record(_ nodes: [(String, Int, NodeRunRecord.Result)]) throws {
            _ = try store.lastDurations(graph: "moon.yaml")
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 1000), durationMilliseconds: 10, ok: true)
            run.nodes = nodes.map { NodeRunRecord(node: $0.0, startedAt: run.startedAt, durationMilliseconds: $0.1, result: $0.2, attempts: 1) }
            try store.record(run)
        }
        try record([("build", 100, .succeeded), ("once", 5, .succeeded)])
        try record([("build", 105, .succeeded), ("once", 50, .failed)])
        #expect(try store.lastDurations(graph: "moon.yaml") == ["build": 100, "once": 5])
        try record([("build", 200, .succeeded)])
        #expect(try store.lastDurations(graph: "moon.yaml") == ["build": 200, "once": 5])
    }

    /// A store of schema 1 (a row per node in `node_runs`, no
    /// `node_durations`, no `run_nodes`) keeps its history and durations when
    /// a newer moon opens it, and new runs are added beside the old ones.
    @Test func aSchemaOneStoreKeepsItsHistoryAndDurations() throws {
        let tree = try TempTree()
        do {
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            try store.db.writeWithoutTransaction { db in
                try db.execute(sql: """
                    DROP TABLE node_durations; DROP TABLE run_nodes;
                    INSERT INTO runs (id, graph, started_at, duration_ms, ok, forced, succeeded, failed, skipped, up_to_date, canceled)
                    VALUES (1, 'moon.yaml', 1000, 300, 1, 0, 2, 0, 0, 0, 0);
                    INSERT INTO node_runs (run_id, node, started_at, duration_ms, result, attempts)
                    VALUES (1, 'build', 1000.5, 250, 'succeeded', 1), (1, 'test', NULL, NULL, 'skipped', 0);
                    PRAGMA user_version = 1;
                    """)
            }
        }
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        #expect(try store.lastDurations(graph: "moon.yaml") == ["build": 250])
        var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: 2000), durationMilliseconds: 10, ok: true)
        run.nodes = [NodeRunRecord(node: "build", startedAt: run.startedAt, durationMilliseconds: 900, result: .succeeded, attempts: 2)]
        try store.record(run)
        let runs = try store.recentRuns(graph: "moon.yaml", limit: 5)
        #expect(runs.map { $0.nodes.map(\.node) } == [["build"], ["build", "test"]])
        #expect(runs[1].nodes[0].startedAt == Date(timeIntervalSince1970: 1000.5))
        #expect(runs[0].nodes[0].attempts == 2)
        #expect(try store.lastDurations(graph: "moon.yaml") == ["build": 900])
        // Learning reads both kinds of run, oldest first.
        #expect(try store.recentSuccesses(graph: "moon.yaml", limit: 5).map { "\($0.node) \($0.milliseconds)" } == ["build 250", "build 900"])
    }

    /// What learning reads of a run's text: the records that succeeded with a duration, as `decode` reads them.
    @Test func successesAreTheSucceededRecordsDecodeReads() {
        let nodes = [
            NodeRunRecord(node: "a", startedAt: Date(timeIntervalSince1970: 1), durationMilliseconds: 12, result: .succeeded, attempts: 1,
                          cpuMilliseconds: 5, maxRSSBytes: 1000),
            NodeRunRecord(node: "b", durationMilliseconds: 3, result: .failed, attempts: 1),
            NodeRunRecord(node: "c", result: .succeeded, attempts: 1),
            NodeRunRecord(node: "odd\tname\\x", durationMilliseconds: 7, result: .succeeded, attempts: 2),
            NodeRunRecord(node: "d", result: .upToDate, attempts: 0),
        ]
        let text = NodeRunsText.encode(nodes) + "junk\tline\n" + "e\t\t9\tsucceeded\t1x\n" + "f\t\t9\tsucceededx\t1\n"
        var read: [String] = []
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            NodeRunsText.successes(bytes) { read.append("\($0) \($1) \($2 ?? -1)") }
        }
        let decoded = NodeRunsText.decode(text).filter { $0.result == .succeeded && $0.durationMilliseconds != nil }
        #expect(read == decoded.map { "\($0.node) \($0.durationMilliseconds!) \($0.maxRSSBytes ?? -1)" })
        #expect(read == ["a 12 1000", "odd\tname\\x 7 -1"])
    }

    @Test func nodeRunsTextRoundTrips() {
        let nodes = [
            NodeRunRecord(node: "a", startedAt: Date(timeIntervalSince1970: 1_795_329_194.783), durationMilliseconds: 12,
                          result: .succeeded, attempts: 1),
            NodeRunRecord(node: "b.c+d-e", startedAt: nil, durationMilliseconds: nil, result: .upToDate, attempts: 0),
            NodeRunRecord(node: "odd\tname\\with\nbreaks", startedAt: Date(timeIntervalSince1970: 0), durationMilliseconds: 0,
                          result: .canceled, attempts: 3),
        ]
        #expect(NodeRunsText.decode(NodeRunsText.encode(nodes)) == nodes)
        #expect(NodeRunsText.encode(Array(nodes.prefix(2))) == "a\t1795329194783\t12\tsucceeded\t1\nb.c+d-e\t\t\tup-to-date\t0\n")
    }

    /// A node's usage adds two fields; lines of five, written before, still read (without it).
    @Test func nodeRunsTextCarriesUsageAndReadsOlderLines() {
        let measured = NodeRunRecord(node: "big", startedAt: Date(timeIntervalSince1970: 1_795_329_194.783), durationMilliseconds: 2100,
                                     result: .failed, attempts: 2, cpuMilliseconds: 2045, maxRSSBytes: 223_432_704)
        let plain = NodeRunRecord(node: "group", result: .succeeded, attempts: 1)
        let text = NodeRunsText.encode([measured, plain])
        #expect(text == "big\t1795329194783\t2100\tfailed\t2\t2045\t223432704\ngroup\t\t\tsucceeded\t1\n")
        #expect(NodeRunsText.decode(text) == [measured, plain])
        let older = NodeRunsText.decode("a\t1795329194783\t12\tsucceeded\t1\n")
        #expect(older.count == 1 && older[0].cpuMilliseconds == nil && older[0].maxRSSBytes == nil && older[0].durationMilliseconds == 12)
        // Six fields, or a usage that is not two counts, is no line moon wrote.
        #expect(NodeRunsText.decode("a\t\t12\tsucceeded\t1\t5\n").isEmpty)
        #expect(NodeRunsText.decode("a\t\t12\tsucceeded\t1\t-5\tx\n").map(\.maxRSSBytes) == [nil])
    }

    /// Read as bytes, a record's numbers read as `Int64(_:)` reads them,
    /// and a line that is not one (a bad number, too many fields) is left out.
    @Test func nodeRunsTextReadsNumbersAsIntegersDo() {
        for text in ["0", "7", "-12", "+5", "9223372036854775807", "-9223372036854775808", "", "-", "+", "1x", " 1",
                     "9223372036854775808", "-9223372036854775809", "١"] {
            let read = Array(text.utf8).withUnsafeBufferPointer { NodeRunsText.integer($0) }
            #expect(read == Int64(text), "\(text)")
        }
        #expect(NodeRunsText.decode("a\t\t12\tsucceeded\t1x\n").isEmpty)
        #expect(NodeRunsText.decode("a\t\t12\tsucceeded\t1\t5\t6\t7\n").isEmpty)
        #expect(NodeRunsText.decode("\n\nb\tx\t\tsucceeded\t2\n\n").map { [$0.node, "\($0.attempts)", "\($0.startedAt == nil)"] }
                == [["b", "2", "true"]])
    }

    @Test(arguments: [0, 7, 10, 99, 1_795_329_194_783, -1, -10, Int64.max, Int64.min])
    func decimalsAreWrittenAsStringWritesThem(_ value: Int64) {
        var bytes: [UInt8] = []
        NodeRunsText.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }

    @Test func weightsComeFromDurationsAndDefaultToTheMedian() throws {
        let tree = try TempTree()
        let graph = try tree.graph("version: 1\nnodes:\n  a: { run: x }\n  b: { run: x }\n  c: { run: x }\n")
        #expect(PriorityWeights.weights(for: graph, durations: [:]) == nil)
        #expect(PriorityWeights.weights(for: graph, durations: ["a": 500, "b": 0]) == [500, 1, 500])
    }

    @Test func twoWritersAtOnceLeaveTheStoreIntact() throws {
        let tree = try TempTree()
        let stores = (0..<2).compactMap { _ in StateStore.open(graphDirectory: tree.root).store }
        #expect(stores.count == 2)
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for i in 0..<50 {
                var run = RunRecord(graph: "moon.yaml", startedAt: Date(), durationMilliseconds: i, ok: true)
                run.nodes = [NodeRunRecord(node: "n\(worker)", durationMilliseconds: i, result: .succeeded, attempts: 1)]
                try? stores[worker].record(run)
                let hash = ContentHash(bytes: [UInt8](repeating: UInt8(i), count: 32))!
                try? stores[worker].saveFileCache(["f\(worker)-\(i)": StatCache.Entry(stat: FileStat(size: 1, mtimeNanoseconds: 1, inode: 1), hash: hash, racy: false)])
            }
        }
        #expect(try stores[0].recentRuns(graph: "moon.yaml", limit: 1000).count == 100)
        #expect(try stores[1].loadFileCache().count == 100)
        #expect(try stores[0].integrityCheck() == "ok")
    }

    /// A depfile's stored list: NUL-ended paths, read back exactly (empty
    /// entries skipped, a last path without its NUL kept, UTF-8 intact).
    @Test func storedDependencyListsDecodeExactly() {
        let paths = ["include/a.h", "/usr/include/stdio.h", "dir with space/é.h", "x"]
        #expect(StateStore.decodePaths(StateStore.encodePaths(paths)) == paths)
        #expect(StateStore.decodePaths(StateStore.encodePaths([])) == [])
        #expect(StateStore.decodePaths(Data([0, 0, 0x61, 0, 0, 0x62, 0x63])) == ["a", "bc"])
        #expect(StateStore.decodePaths(Data()) == [])
    }

    /// A digest's bytes become the hash in order (SHA-256 of "abc").
    @Test func aDigestKeepsItsBytes() throws {
        let tree = try TempTree()
        try tree.write("abc.txt", "abc")
        #expect(ContentHash.ofFile(tree.path("abc.txt"))?.hex
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(ContentHash.ofFile(tree.path("abc.txt"))?.hex(digits: 16) == "ba7816bf8f01cfea")
        let bytes: [UInt8] = (0..<32).map { (i: Int) -> UInt8 in UInt8(i * 7 + 1) }
        let hash = ContentHash(bytes: bytes)!
        var out: [UInt8] = [0xff]
        hash.appendBytes(to: &out)
        let expected: [UInt8] = [0xff] + bytes
        #expect(out == expected)
        #expect(hash.bytes == bytes)
    }
}
