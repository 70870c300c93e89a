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
}
