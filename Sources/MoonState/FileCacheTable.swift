import Foundation
import GRDB

/// The stat cache's table (`files`): a content hash per path, with the
/// size, mtime and inode it had when hashed (see `StatCache`).
extension StateStore {
    public func loadFileCache() throws -> [String: StatCache.Entry] {
        try reading { db in
            var result: [String: StatCache.Entry] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT path, size, mtime_ns, inode, hash, racy FROM files")
            while let row = try rows.next() {
                if let path = String.fromDatabaseValue(row[0] as DatabaseValue), let entry = Self.fileEntry(row, from: 1) { result[path] = entry }
            }
            return result
        }
    }

    /// The entry of one path (a look-up of the primary key), nil when the table has none.
    public func fileCacheEntry(_ path: String) throws -> StatCache.Entry? {
        try reading { db in
            let statement = try db.cachedStatement(sql: "SELECT size, mtime_ns, inode, hash, racy FROM files WHERE path = ?")
            return try Row.fetchOne(statement, arguments: [path]).flatMap { Self.fileEntry($0, from: 0) }
        }
    }

    /// The entry in `row`'s columns size, mtime_ns, inode, hash, racy from `first` on.
    /// A row of the wrong types (a store someone else wrote) is no entry:
    /// each value converted by `fromDatabaseValue`, which fails instead of trapping.
    private static func fileEntry(_ row: Row, from first: Int) -> StatCache.Entry? {
        func value<T: DatabaseValueConvertible>(_ column: Int, as: T.Type) -> T? { T.fromDatabaseValue(row[column] as DatabaseValue) }
        guard let hashData = value(first + 3, as: Data.self), let hash = ContentHash(bytes: hashData),
              let size = value(first, as: Int64.self), let mtime = value(first + 1, as: Int64.self),
              let inode = value(first + 2, as: Int64.self), let racy = value(first + 4, as: Bool.self) else { return nil }
        return StatCache.Entry(stat: FileStat(size: size, mtimeNanoseconds: mtime, inode: UInt64(bitPattern: inode)), hash: hash, racy: racy)
    }

    public func saveFileCache(_ entries: [String: StatCache.Entry]) throws {
        guard !entries.isEmpty else { return }
        try db.write { try Self.saveFiles(entries, in: $0) }
    }

    /// Writes `entries` inside the caller's transaction, straight through
    /// SQLite (`SQLiteRows.runEach`): a fresh checkout's restore writes a
    /// row per file of the project.
    static func saveFiles(_ entries: [String: StatCache.Entry], in db: Database) throws {
        guard !entries.isEmpty else { return }
        try SQLiteRows.runEach(db, "INSERT OR REPLACE INTO files (path, size, mtime_ns, inode, hash, racy) VALUES (?, ?, ?, ?, ?, ?)",
                               entries) { path, entry in
            [path.databaseValue, entry.stat.size.databaseValue, entry.stat.mtimeNanoseconds.databaseValue,
             Int64(bitPattern: entry.stat.inode).databaseValue, entry.hash.data.databaseValue, entry.racy.databaseValue]
        }
    }
}
