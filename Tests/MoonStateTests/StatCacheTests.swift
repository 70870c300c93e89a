import Foundation
import Testing
@testable import MoonState

/// The stat cache asks the store about the files it is asked about, one
/// look-up each, and reads the store's whole table only once a check asks
/// about many (a checkout that touched them).
@Suite struct StatCacheTests {
    final class Calls {
        var one: [String] = []
        var all = 0
    }

    func cache(_ table: [String: StatCache.Entry], _ calls: Calls) -> StatCache {
        StatCache(source: StatCache.Source(one: { path in
            calls.one.append(path)
            return table[path]
        }, all: {
            calls.all += 1
            return table
        }))
    }

    static func entry(_ n: Int64) -> StatCache.Entry {
        StatCache.Entry(stat: FileStat(size: n, mtimeNanoseconds: n, inode: UInt64(n)), hash: ContentHash(bytes: Array(repeating: UInt8(n % 256), count: 32))!,
                        racy: false)
    }

    @Test func anEditsFewFilesAreLookedUpOneAtATime() {
        let table = Dictionary(uniqueKeysWithValues: (0..<1000).map { ("f\($0)", Self.entry(Int64($0))) })
        let calls = Calls()
        let cache = cache(table, calls)
        #expect(cache.known(ScannedFile(path: "f7", stat: Self.entry(7).stat)) == Self.entry(7))
        #expect(cache.known(ScannedFile(path: "f7", stat: Self.entry(8).stat)) == nil, "a stat that changed is no answer")
        #expect(cache.known(ScannedFile(path: "new", stat: Self.entry(1).stat)) == nil)
        #expect(cache.known(ScannedFile(path: "new", stat: Self.entry(1).stat)) == nil)
        #expect(calls.one == ["f7", "new"] && calls.all == 0, "each path asked once, a miss too")
    }

    @Test func manyFilesReadTheTableOnce() {
        let table = Dictionary(uniqueKeysWithValues: (0..<1000).map { ("f\($0)", Self.entry(Int64($0))) })
        let calls = Calls()
        let cache = cache(table, calls)
        for n in 0..<200 {
            #expect(cache.known(ScannedFile(path: "f\(n)", stat: Self.entry(Int64(n)).stat)) == Self.entry(Int64(n)))
        }
        #expect(calls.one.count == StatCache.lookupLimit && calls.all == 1)
    }

    /// A hash this run took stands over the store's older one.
    @Test func aHashTakenNowIsNotReplacedByTheTables() {
        let calls = Calls()
        let cache = cache(["a": Self.entry(1)], calls)
        let file = ScannedFile(path: "a", stat: Self.entry(2).stat)
        cache.add(file, Self.entry(2).hash, racy: false)
        for n in 0..<100 { _ = cache.known(ScannedFile(path: "x\(n)", stat: Self.entry(1).stat)) }
        #expect(calls.all == 1 && cache.known(file) == Self.entry(2))
    }

    /// A stat cache row of the wrong types (a store someone else wrote, a
    /// `.moon/` committed to a repository) is no entry, never a trap.
    @Test func aRowOfTheWrongTypesIsNoEntry() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.db.write { db in
            try db.execute(sql: "INSERT INTO files (path, size, mtime_ns, inode, hash, racy) VALUES ('a', 'big', 1, 1, x'00', 0)")
            try db.execute(sql: "INSERT INTO files (path, size, mtime_ns, inode, hash, racy) VALUES ('b', 1, 1, 1, 'text', 'yes')")
            try db.execute(sql: "INSERT INTO files (path, size, mtime_ns, inode, hash, racy) VALUES (x'ff', 1, 1, 1, zeroblob(32), 0)")
            try db.execute(sql: "INSERT INTO files (path, size, mtime_ns, inode, hash, racy) VALUES ('c', 1, 2, 3, zeroblob(32), 0)")
        }
        #expect(try store.fileCacheEntry("a") == nil)
        #expect(try store.fileCacheEntry("b") == nil)
        #expect(try store.fileCacheEntry("c")?.stat == FileStat(size: 1, mtimeNanoseconds: 2, inode: 3))
        #expect(try store.loadFileCache().keys.sorted() == ["c"])
    }
}
