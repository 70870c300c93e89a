import Foundation
import GRDB

/// The stat cache's table (`files`): a content hash per path, with the
/// size, mtime and inode it had when hashed (see `StatCache`).
extension StateStore {
    public func loadFileCache() throws -> [String: StatCache.Entry] {
        try db.read { db in
            var result: [String: StatCache.Entry] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT path, size, mtime_ns, inode, hash, racy FROM files")
            while let row = try rows.next() {
                let hashData: Data = row[4]
                guard let hash = ContentHash(bytes: hashData) else { continue }
                let inode: Int64 = row[3]
                let stat = FileStat(size: row[1], mtimeNanoseconds: row[2], inode: UInt64(bitPattern: inode))
                result[row[0]] = StatCache.Entry(stat: stat, hash: hash, racy: row[5])
            }
            return result
        }
    }

    public func saveFileCache(_ entries: [String: StatCache.Entry]) throws {
        guard !entries.isEmpty else { return }
        try db.write { try Self.saveFiles(entries, in: $0) }
    }

    /// Writes `entries` inside the caller's transaction.
    static func saveFiles(_ entries: [String: StatCache.Entry], in db: Database) throws {
        guard !entries.isEmpty else { return }
        let statement = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO files (path, size, mtime_ns, inode, hash, racy) VALUES (?, ?, ?, ?, ?, ?)
            """)
        for (path, entry) in entries {
            try statement.execute(arguments: [path, entry.stat.size, entry.stat.mtimeNanoseconds,
                                              Int64(bitPattern: entry.stat.inode), entry.hash.data, entry.racy])
        }
    }
}
