import GRDB
import GRDBSQLite

/// One prepared statement on SQLite's C API, for the store's two hot
/// paths (a run's nodes and durations at its end, the durations at the next
/// start), where GRDB's generic arguments and rows cost more than SQLite
/// itself. Used inside a GRDB access block, on its connection; finalized
/// when released. Errors are GRDB's `DatabaseError`, like the rest of the
/// store's.
final class SQLiteStatement {
    private let connection: OpaquePointer
    private let statement: OpaquePointer

    /// SQLite copies bound text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    init(_ connection: OpaquePointer, _ sql: String) throws {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw Self.error(code, connection)
        }
        self.connection = connection
        self.statement = prepared
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Runs `sql` (one statement, no result rows wanted).
    static func execute(_ connection: OpaquePointer, _ sql: String) throws {
        try SQLiteStatement(connection, sql).run()
    }

    /// `body` in a write transaction (`BEGIN IMMEDIATE`: the write lock is
    /// taken, or waited for, first), rolled back when it throws.
    static func inTransaction(_ connection: OpaquePointer, _ body: () throws -> Void) throws {
        try execute(connection, "BEGIN IMMEDIATE")
        do {
            try body()
            try execute(connection, "COMMIT")
        } catch {
            sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// The first column of the first row of `sql` as text (nil: no row).
    static func single(_ connection: OpaquePointer, _ sql: String) throws -> String? {
        let query = try SQLiteStatement(connection, sql)
        return try query.step() ? query.text(0) : nil
    }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(statement, index, value, -1, Self.transient)
    }

    /// Runs a statement that returns no rows, then resets it for the next
    /// bindings.
    func run() throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else { throw Self.error(code, connection) }
    }

    /// The next row: true while there is one.
    func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw Self.error(code, connection)
        }
    }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: bytes)
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(statement, column)
    }

    private static func error(_ code: Int32, _ connection: OpaquePointer) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
    }
}
