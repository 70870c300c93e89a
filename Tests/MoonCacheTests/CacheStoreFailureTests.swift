import Foundation
import Glibc
import Testing
@testable import MoonCache

/// A store that fails after writing some blobs (a full disk, an entry that
/// cannot be written) removes the blobs it put there: no blob stays that no
/// entry names (on a disk smaller than the size limit nothing would prune it).
@Suite struct CacheStoreFailureTests {
    @Test func aFailedStoreRemovesTheBlobsItWrote() throws {
        let root = try scratchDirectory("storefail")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let graph = root + "/graph"
        try FileManager.default.createDirectory(atPath: graph + "/out", withIntermediateDirectories: true)
        for name in ["a", "b", "c"] { try Data("output \(name)\n".utf8).write(to: URL(fileURLWithPath: graph + "/out/\(name).txt")) }
        // A blob that was there before the store: the failure must keep it (another entry may name it).
        let directory = CacheDirectory(path: root + "/cache")
        let (kept, _, placed) = try directory.storeBlob(copying: graph + "/out/a.txt")
        #expect(placed)
        var warnings: [String] = []
        let cache = OutputCache(directory: directory, root: graph, onWarning: { warnings.append($0) })
        // The cache looks at its directory at the first question, and finds it usable.
        #expect(!cache.mayHave(CacheKey(hex: String(repeating: "1", count: 64))!))
        // Then `v1/ac` a file: the entry's rename fails after every blob is in place.
        _ = FileManager.default.createFile(atPath: root + "/cache/v1/ac", contents: Data())
        cache.store(CacheKey(hex: String(repeating: "1", count: 64))!, node: "n", declared: DeclaredOutputs(generates: ["out"]),
                    outputs: [], values: [], dependencies: [])
        cache.finish()
        #expect(warnings.count == 1 && warnings[0].contains("cannot store node 'n'"), "\(warnings)")
        #expect(CacheUsage.measure(directory).blobs == 1)
        #expect(directory.hasBlob(kept))
    }
}

/// The cache's directory is looked at when a node first needs it: a run
/// that needs no entry opens none of it, and one that does, in a directory
/// moon must not use, is warned once and reads and stores nothing.
@Suite struct CacheFirstUseTests {
    @Test func anUnusableDirectoryIsFoundAtTheFirstQuestionAndWarnedOnce() throws {
        let root = try scratchDirectory("firstuse")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/graph", withIntermediateDirectories: true)
        try Data("output\n".utf8).write(to: URL(fileURLWithPath: root + "/graph/out.txt"))
        try FileManager.default.createDirectory(atPath: root + "/elsewhere/ac", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/cache", withIntermediateDirectories: true)
        // `v1` a link planted to another directory: not a cache moon uses.
        #expect(symlink(root + "/elsewhere", root + "/cache/v1") == 0)
        var warnings: [String] = []
        let cache = OutputCache(directory: CacheDirectory(path: root + "/cache"), root: root + "/graph", onWarning: { warnings.append($0) })
        #expect(warnings.isEmpty)
        let key = CacheKey(hex: String(repeating: "2", count: 64))!
        #expect(!cache.mayHave(key))
        #expect(warnings.count == 1 && warnings[0].contains("symbolic link") && warnings[0].contains("running without the cache"), "\(warnings)")
        #expect(cache.restore(key, node: "n", declared: DeclaredOutputs(generates: ["out.txt"])) == nil)
        cache.store(key, node: "n", declared: DeclaredOutputs(generates: ["out.txt"]), outputs: [], values: [], dependencies: [])
        cache.finish()
        #expect(!cache.isStoring)
        #expect(warnings.count == 1, "\(warnings)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/elsewhere/ac").isEmpty)
    }
}
