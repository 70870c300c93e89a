import Foundation
import GRDB
import Testing
@testable import MoonState

/// What the history writes straight through SQLite reads back as GRDB
/// would have written it, and a transaction that fails leaves nothing.
@Suite struct SQLiteRowsTests {
    struct Failure: Error {}

    func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db in try SQLiteRows.execute(db, "CREATE TABLE t (a, b, c, d, e, f)") }
        return queue
    }

    @Test func eachKindOfValueIsBoundAsItIs() throws {
        let queue = try table()
        try queue.writeWithoutTransaction { db in
            try SQLiteRows.transaction(db) {
                try SQLiteRows.run(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                                   ["".databaseValue, Data().databaseValue, DatabaseValue.null, Int64(-3).databaseValue,
                                    2.5.databaseValue, "a\u{0}b é".databaseValue])
            }
        }
        let row = try #require(try queue.read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(a), a, typeof(b), length(b), typeof(c), d, e, length(CAST(f AS BLOB)) FROM t")
        })
        #expect(row[0] as String == "text")
        #expect(row[1] as String == "")
        #expect(row[2] as String == "blob")
        #expect(row[3] as Int == 0)
        #expect(row[4] as String == "null")
        #expect(row[5] as Int64 == -3)
        #expect(row[6] as Double == 2.5)
        #expect(row[7] as Int == 6, "the NUL and both bytes of é are kept")
    }

    @Test func aTransactionThatThrowsLeavesNothing() throws {
        let queue = try table()
        #expect(throws: Failure.self) {
            try queue.writeWithoutTransaction { db in
                try SQLiteRows.transaction(db) {
                    try SQLiteRows.run(db, "INSERT INTO t (a) VALUES (?)", [1.databaseValue])
                    throw Failure()
                }
            }
        }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 0)
        // The connection is usable afterwards, outside any transaction.
        try queue.writeWithoutTransaction { db in
            try SQLiteRows.transaction(db) { try SQLiteRows.run(db, "INSERT INTO t (a) VALUES (?)", [2.databaseValue]) }
        }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT a FROM t") } == 2)
    }

    /// One statement for many rows: each row's values, none of the row
    /// before's; a row that fails partway leaves none of the transaction's.
    @Test func eachRowGetsItsOwnValuesAndAFailedRowUndoesTheTransaction() throws {
        let queue = try table()
        try queue.writeWithoutTransaction { db in
            try SQLiteRows.execute(db, "CREATE UNIQUE INDEX t_a ON t (a)")
            try SQLiteRows.transaction(db) {
                try SQLiteRows.runEach(db, "INSERT INTO t (a, b) VALUES (?, ?)", [(1, "x"), (2, ""), (3, "z")]) { row in
                    [row.0.databaseValue, row.1.isEmpty ? DatabaseValue.null : row.1.databaseValue]
                }
            }
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT a, b FROM t ORDER BY a") }
        #expect(rows.map { $0[0] as Int } == [1, 2, 3])
        #expect(rows.map { $0[1] as String? } == ["x", nil, "z"])
        #expect(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in
                try SQLiteRows.transaction(db) {
                    try SQLiteRows.runEach(db, "INSERT INTO t (a) VALUES (?)", [4, 5, 1, 6]) { [$0.databaseValue] }
                }
            }
        }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 3, "4 and 5 rolled back with the duplicate 1")
    }

    @Test func anErrorNamesTheStatement() throws {
        let queue = try table()
        let error = try #require(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in try SQLiteRows.run(db, "INSERT INTO missing VALUES (?)", [1.databaseValue]) }
        }
        #expect(error.resultCode == .SQLITE_ERROR)
        #expect(error.sql == "INSERT INTO missing VALUES (?)")
    }
}
