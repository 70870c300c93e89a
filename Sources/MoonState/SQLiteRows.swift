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

    /// Runs `sql` once with `values` bound in order, prepared and stepped
    /// straight through SQLite: GRDB builds a statement's SQL with a generic
    /// `joined`, whose first call in a process scans every conformance
    /// record of the binary, and a run that writes only its history pays
    /// for nothing else of GRDB's.
    static func run(_ db: Database, _ sql: String, _ values: [DatabaseValue]) throws {
        try runEach(db, sql, CollectionOfOne(values)) { $0 }
    }

    /// Runs `sql` once per element of `rows`, with the values `values`
    /// gives for it bound in order: prepared once, as `run` runs it.
    static func runEach<Rows: Sequence>(_ db: Database, _ sql: String, _ rows: Rows,
                                        _ values: (Rows.Element) -> [DatabaseValue]) throws {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        let connection = db.sqliteConnection
        var code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        if code == SQLITE_OK, let statement {
            for row in rows where code == SQLITE_OK {
                for (i, value) in values(row).enumerated() where code == SQLITE_OK { code = bind(statement, Int32(i + 1), value) }
                if code == SQLITE_OK {
                    code = sqlite3_step(statement)
                    if code == SQLITE_DONE || code == SQLITE_ROW {
                        code = sqlite3_reset(statement)
                        if code == SQLITE_OK { code = sqlite3_clear_bindings(statement) }
                    }
                }
            }
            if code == SQLITE_OK { return }
        }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// Runs `body` in a transaction begun and ended straight through SQLite
    /// (see `run`), immediate (a writer's: it takes the write lock at once)
    /// or deferred (a reader's: one snapshot of the rows); rolled back when
    /// it throws. GRDB asks SQLite whether a transaction is open, so its own
    /// checks hold; its transaction observers would not hear of this one
    /// (moon registers none).
    static func transaction<T>(_ db: Database, immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(db, immediate ? "BEGIN IMMEDIATE TRANSACTION" : "BEGIN DEFERRED TRANSACTION")
        do {
            let result = try body()
            try execute(db, "COMMIT TRANSACTION")
            return result
        } catch {
            if sqlite3_get_autocommit(db.sqliteConnection) == 0 { try? execute(db, "ROLLBACK TRANSACTION") }
            throw error
        }
    }

    /// SQLite copies what it is given (its `SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bind(_ statement: OpaquePointer, _ index: Int32, _ value: DatabaseValue) -> Int32 {
        switch value.storage {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .int64(let number):
            return sqlite3_bind_int64(statement, index, number)
        case .double(let number):
            return sqlite3_bind_double(statement, index, number)
        case .string(var text):
            // Bound by its length, so an empty text is not a NULL and a NUL is kept.
            return text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    guard let start = chars.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
                    return sqlite3_bind_text64(statement, index, start, sqlite3_uint64(chars.count), transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            return data.withUnsafeBytes { bytes in
                sqlite3_bind_blob64(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(bytes.count),
                                    transient)
            }
        }
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
        sqlite3_column_type(row, column) == SQLITE_NULL ? nil : Data(copying: blob(row, column))
    }

    static func text(_ row: SQLiteStatement, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(row, column) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column))), as: UTF8.self)
    }

    static func int(_ row: SQLiteStatement, _ column: Int32) -> Int { Int(sqlite3_column_int64(row, column)) }

    static func double(_ row: SQLiteStatement, _ column: Int32) -> Double { sqlite3_column_double(row, column) }
}

extension Data {
    /// `bytes` copied by count: `Data(_:)` over a buffer is the generic
    /// sequence initializer, which looks up an array storage's metadata at
    /// every call (several per node of every run's stored states).
    init(copying bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            self.init()
            return
        }
        self.init(bytes: base, count: bytes.count)
    }
}
