import Foundation
import GRDB
import GRDBSQLite

/// Rows read column by column through SQLite's own accessors, on the
/// store's GRDB connection. GRDB's `Row` wraps each value (a blob in a Data
/// and a closure): for the reads every run makes of every node (its state,
/// its last duration) that was most of the read.
enum SQLiteRows {
    /// Calls `body` with each row of `sql`; a column's bytes are valid until `body` returns.
    static func each(_ db: Database, sql: String, arguments: StatementArguments, _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try db.makeStatement(sql: sql)
        try statement.setArguments(arguments)
        let row = statement.sqliteStatement
        while true {
            let code = sqlite3_step(row)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
            }
            try body(row)
        }
    }

    /// The first column of the first row of `sql` as an integer (nil
    /// without a row), prepared and read straight through SQLite: GRDB's
    /// request for one row builds its SQL through generic types whose
    /// metadata every opening of the store would instantiate.
    static func firstInteger(_ db: Database, _ sql: String) throws -> Int64? {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        let connection = db.sqliteConnection
        var code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        if code == SQLITE_OK, let statement {
            code = sqlite3_step(statement)
            if code == SQLITE_ROW { return sqlite3_column_int64(statement, 0) }
            if code == SQLITE_DONE { return nil }
        }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// Runs `sql` (statements without results, such as pragmas that set)
    /// straight through SQLite, without GRDB's parsing of it into statements.
    static func execute(_ db: Database, _ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(db.sqliteConnection, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error \(code)"
            sqlite3_free(message)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: text, sql: sql)
        }
    }

    /// A column's bytes (empty for NULL).
    static func blob(_ row: SQLiteStatement, _ column: Int32) -> UnsafeRawBufferPointer {
        guard let bytes = sqlite3_column_blob(row, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(row, column)))
    }

    /// A column's bytes as a Data, nil for NULL.
    static func data(_ row: SQLiteStatement, _ column: Int32) -> Data? {
        sqlite3_column_type(row, column) == SQLITE_NULL ? nil : Data(blob(row, column))
    }

    static func text(_ row: SQLiteStatement, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(row, column) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column))), as: UTF8.self)
    }

    static func int(_ row: SQLiteStatement, _ column: Int32) -> Int { Int(sqlite3_column_int64(row, column)) }

    static func double(_ row: SQLiteStatement, _ column: Int32) -> Double { sqlite3_column_double(row, column) }
}
