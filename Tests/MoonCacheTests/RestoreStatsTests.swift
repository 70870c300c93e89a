import Foundation
import Glibc
import MoonState
import Testing
@testable import MoonCache

/// A restore hands back the stat of each file it built unnamed, taken from
/// its descriptor before the link: the one a stat of the path finds after,
/// so the state keeps the file's hash without stat'ing it again. The
/// shards it read from are kept open, and a shard removed since is opened again.
@Suite struct RestoreStatsTests {
    /// A project with one object and one directory output, stored, then removed (a fresh checkout).
    func stored(_ root: String) throws -> (OutputCache, CacheKey, DeclaredOutputs) {
        let graph = root + "/graph"
        try FileManager.default.createDirectory(atPath: graph + "/out/dir", withIntermediateDirectories: true)
        try Data("object\n".utf8).write(to: URL(fileURLWithPath: graph + "/out/a.o"))
        try Data("inside\n".utf8).write(to: URL(fileURLWithPath: graph + "/out/dir/b.txt"))
        let cache = OutputCache(directory: CacheDirectory(path: root + "/cache"), root: graph)
        let key = try #require(CacheKey(hex: String(repeating: "5", count: 64)))
        let declared = DeclaredOutputs(generates: ["out/a.o", "out/dir"])
        cache.store(key, node: "a.o", declared: declared, outputs: [], values: [], dependencies: [])
        cache.finish()
        try FileManager.default.removeItem(atPath: graph + "/out")
        return (cache, key, declared)
    }

    @Test func aRestoredFilesStatIsTheOneInPlace() throws {
        let root = try scratchDirectory("restorestats")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (cache, key, declared) = try stored(root)
        let restored = try #require(cache.restore(key, node: "a.o", declared: declared))
        #expect(restored.files == 2)
        let stat = try #require(restored.stats["out/a.o"])
        #expect(FileStat.of(root + "/graph/out/a.o")?.0 == stat)
        // The file of a directory output is built under its directory's temporary name, then stat'ed in place.
        #expect(restored.stats["out/dir/b.txt"] == nil)
        #expect(try String(contentsOfFile: root + "/graph/out/dir/b.txt", encoding: .utf8) == "inside\n")
    }

    @Test func aShardRemovedSinceItWasOpenedIsOpenedAgain() throws {
        let root = try scratchDirectory("restoreshards")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (cache, key, declared) = try stored(root)
        #expect(cache.restore(key, node: "a.o", declared: declared) != nil)
        // The cache is deleted and made again (as under `moon run --watch`): its shards are new directories.
        try FileManager.default.removeItem(atPath: root + "/graph/out")
        try FileManager.default.moveItem(atPath: root + "/cache", toPath: root + "/cache.old")
        try FileManager.default.copyItem(atPath: root + "/cache.old", toPath: root + "/cache")
        try FileManager.default.removeItem(atPath: root + "/cache.old")
        let again = try #require(cache.restore(key, node: "a.o", declared: declared))
        #expect(again.files == 2)
        #expect(try String(contentsOfFile: root + "/graph/out/a.o", encoding: .utf8) == "object\n")
    }
}
