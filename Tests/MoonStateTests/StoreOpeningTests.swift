import Foundation
import GRDB
import Testing
@testable import MoonState

/// The opening's shortcuts: a store of this schema is read with one
/// statement (`StateSchema.isCurrent`) and its WAL pragma skipped when the
/// header says WAL; any other store still goes through the migration.
@Suite struct StoreOpeningTests {
    private func open(_ tree: TempTree) throws -> StateStore {
        let opened = StateStore.open(graphDirectory: tree.root)
        #expect(opened.warning == nil, "\(opened.warning ?? "")")
        return try #require(opened.store)
    }

    private func value(_ store: StateStore, _ sql: String) throws -> DatabaseValue {
        try store.db.read { try StateStore.firstValue($0, sql: sql) }
    }

    @Test func aStoreOfThisSchemaReopensCurrentWithItsSettings() throws {
        let tree = try TempTree()
        _ = try open(tree)
        #expect(StateStore.headerSaysWAL(tree.path(".moon/state.db")))
        let store = try open(tree)
        #expect(try store.db.read { try StateSchema.isCurrent($0) })
        #expect(String.fromDatabaseValue(try value(store, "PRAGMA journal_mode")) == "wal")
        #expect(Int.fromDatabaseValue(try value(store, "PRAGMA synchronous")) == 1)
        #expect(Int.fromDatabaseValue(try value(store, "PRAGMA wal_autocheckpoint")) == 0)
        #expect(Int.fromDatabaseValue(try value(store, "PRAGMA user_version")) == StateSchema.version)
    }

    /// A store of an older moon, without `node_state.patterns`, is not
    /// current: the opening adds the column.
    @Test func aStoreWithoutPatternsIsMigrated() throws {
        let tree = try TempTree()
        try open(tree).db.writeWithoutTransaction { try $0.execute(sql: "ALTER TABLE node_state DROP COLUMN patterns") }
        let raw = try DatabaseQueue(path: tree.path(".moon/state.db"))
        #expect(try raw.read { try StateSchema.isCurrent($0) } == false)
        let store = try open(tree)
        #expect(try store.db.read { try StateSchema.isCurrent($0) })
        #expect(store.hasPatterns)
    }

    /// A store missing a table is not current (the statement fails, which
    /// is not an error of the opening): it opens by the migration's path.
    @Test func aStoreMissingATableOpensAsBefore() throws {
        let tree = try TempTree()
        try open(tree).db.writeWithoutTransaction { try $0.execute(sql: "DROP TABLE node_durations") }
        let raw = try DatabaseQueue(path: tree.path(".moon/state.db"))
        #expect(try raw.read { try StateSchema.isCurrent($0) } == false)
        _ = try open(tree)
    }

    /// A store in rollback-journal mode (not moon's) is turned to WAL.
    @Test func aStoreNotInWALModeIsTurnedToIt() throws {
        let tree = try TempTree()
        try FileManager.default.createDirectory(atPath: tree.path(".moon"), withIntermediateDirectories: true)
        let raw = try DatabaseQueue(path: tree.path(".moon/state.db"))
        try raw.writeWithoutTransaction { try $0.execute(sql: "CREATE TABLE t (x)") }
        try raw.close()
        #expect(!StateStore.headerSaysWAL(tree.path(".moon/state.db")))
        let store = try open(tree)
        #expect(String.fromDatabaseValue(try value(store, "PRAGMA journal_mode")) == "wal")
        #expect(try store.db.read { try StateSchema.isCurrent($0) })
    }

    /// A newer schema is refused as before: the fast path does not take it.
    @Test func aNewerSchemaIsStillRefused() throws {
        let tree = try TempTree()
        try open(tree).db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(StateSchema.version + 1)") }
        let opened = StateStore.open(graphDirectory: tree.root)
        #expect(opened.store == nil)
        #expect(opened.warning?.contains("newer moon") == true, "\(opened.warning ?? "")")
    }

    /// The history keeps `historyLimit` runs per graph, their nodes with
    /// them, and leaves other graphs' runs alone.
    @Test func theHistoryKeepsItsLimitWithTheNodesOfWhatItKeeps() throws {
        let tree = try TempTree()
        let store = try open(tree)
        var other = RunRecord(graph: "other.yaml", startedAt: Date(timeIntervalSince1970: 1), durationMilliseconds: 1, ok: true)
        other.nodes = [NodeRunRecord(node: "x", result: .upToDate)]
        try store.record(other)
        for i in 0..<(StateStore.historyLimit + 3) {
            var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: Double(i)), durationMilliseconds: 1, ok: true)
            run.nodes = [NodeRunRecord(node: "n\(i)", result: .upToDate)]
            try store.record(run)
        }
        let runs = try store.recentRuns(graph: "moon.yaml", limit: 10_000)
        #expect(runs.count == StateStore.historyLimit)
        #expect(runs.last?.nodes.map(\.node) == ["n3"])
        #expect(try store.recentRuns(graph: "other.yaml", limit: 10).count == 1)
        #expect(Int.fromDatabaseValue(try value(store, "SELECT count(*) FROM run_nodes")) == StateStore.historyLimit + 1)
    }
}
