import Foundation
import Testing
@testable import MoonCache

/// The runner asks on its loop whether a local entry is one `restore` would
/// decline for its depfile's files (a header edit), so the check stays there.
@Suite struct LocalEntryStalenessTests {
    @Test func anEntryIsStaleOnlyWhenItsDependenciesNoLongerHold() throws {
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
        #expect(cache.localEntryIsStale(key, declared: declared, dependencies: { asked.append($0.map(\.path)); return false }))
        #expect(asked == [["include/a.h"]])
        #expect(cache.restore(key, node: "a.o", declared: declared, dependencies: { _ in false }) == nil)
        // It did not change: not stale (the restore goes on, off the loop).
        #expect(!cache.localEntryIsStale(key, declared: declared, dependencies: { _ in true }))
        // No entry, or an entry `restore` refuses for what it writes: not for this question.
        #expect(!cache.localEntryIsStale(try #require(CacheKey(hex: String(repeating: "4", count: 64))), declared: declared,
                                         dependencies: { _ in false }))
        #expect(!cache.localEntryIsStale(key, declared: DeclaredOutputs(generates: ["elsewhere"]), dependencies: { _ in false }))
    }
}
