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
        // `v1/ac` a file: the entry's rename fails after every blob is in place.
        _ = FileManager.default.createFile(atPath: root + "/cache/v1/ac", contents: Data())
        var warnings: [String] = []
        let cache = OutputCache(directory: directory, root: graph, onWarning: { warnings.append($0) })
        cache.store(CacheKey(hex: String(repeating: "1", count: 64))!, node: "n", declared: DeclaredOutputs(generates: ["out"]),
                    outputs: [], values: [], dependencies: [])
        cache.finish()
        #expect(warnings.count == 1 && warnings[0].contains("cannot store node 'n'"), "\(warnings)")
        #expect(CacheUsage.measure(directory).blobs == 1)
        #expect(directory.hasBlob(kept))
    }
}
