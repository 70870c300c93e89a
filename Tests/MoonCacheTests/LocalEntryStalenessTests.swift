import Foundation
import Testing
@testable import MoonCache

/// The runner asks on its loop whether a local entry is one `restore` would
/// decline for its depfile's files (a header edit), so the check stays there.
@Suite struct LocalEntryStalenessTests {
    @Test func anEntryIsStaleOnlyWhenItsDependenciesNoLongerHoldAndAFreshOneIsRestoredAsRead() throws {
        let root = try scratchDirectory("staleness")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let graph = root + "/graph"
        try FileManager.default.createDirectory(atPath: graph + "/out", withIntermediateDirectories: true)
        try Data("object\n".utf8).write(to: URL(fileURLWithPath: graph + "/out/a.o"))
        let cache = OutputCache(directory: CacheDirectory(path: root + "/cache"), root: graph)
        let key = try #require(CacheKey(hex: String(repeating: "2", count: 64)))
        let declared = DeclaredOutputs(generates: ["out/a.o"])
        let header = CacheEntry.Dependency(path: "include/a.h", hash: String(repeating: "3", count: 64))
        cache.store(key, node: "a.o", declared: declared, outputs: [], values: [], dependencies: [header])
        cache.finish()

        var asked: [[String]] = []
        // The header changed: stale, and `restore` agrees.
        guard case .stale = cache.localEntry(key, declared: declared, dependencies: { asked.append($0.map(\.path)); return false }) else {
            Issue.record("an entry whose header changed is not stale")
            return
        }
        #expect(asked == [["include/a.h"]])
        #expect(cache.restore(key, node: "a.o", declared: declared, dependencies: { _ in false }) == nil)
        // It did not change: fresh, and restored as it was read, without a second look at its files.
        guard case .fresh(let entry) = cache.localEntry(key, declared: declared, dependencies: { _ in true }) else {
            Issue.record("an entry whose files stand is not fresh")
            return
        }
        try FileManager.default.removeItem(atPath: graph + "/out/a.o")
        let restored = cache.restore(key, node: "a.o", declared: declared, checked: entry, dependencies: { _ in
            Issue.record("the checked entry's files were looked at again")
            return true
        })
        #expect(restored?.files == 1)
        #expect(FileManager.default.contents(atPath: graph + "/out/a.o") == Data("object\n".utf8))
        // No entry, or an entry `restore` refuses for what it writes: for `restore` to say.
        guard case .unknown = cache.localEntry(try #require(CacheKey(hex: String(repeating: "4", count: 64))), declared: declared,
                                               dependencies: { _ in false }),
              case .unknown = cache.localEntry(key, declared: DeclaredOutputs(generates: ["elsewhere"]), dependencies: { _ in false }) else {
            Issue.record("a missing or refused entry is stale or fresh")
            return
        }
    }
}
