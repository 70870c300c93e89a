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

    @Test func anErrorNamesTheStatement() throws {
        let queue = try table()
        let error = try #require(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in try SQLiteRows.run(db, "INSERT INTO missing VALUES (?)", [1.databaseValue]) }
        }
        #expect(error.resultCode == .SQLITE_ERROR)
        #expect(error.sql == "INSERT INTO missing VALUES (?)")
    }
}
