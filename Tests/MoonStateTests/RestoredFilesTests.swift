import Foundation
import MoonGraph
import Testing
@testable import MoonState

/// A file a cache restore wrote is known by the hash its blob was checked
/// against while its stat is unchanged: a node that reads it (an archive
/// of restored objects) does not hash it again, and a later write is read.
@Suite struct RestoredFilesTests {
    static let graphText = """
        version: 1
        nodes:
          pack:
            sources: [out/*]
            generates: [pack.tar]
            run: tar cf pack.tar out
        """

    /// `pack`'s check after a restore wrote `out/a` and `out/b` (their
    /// hashes handed to the state), with `change` applied in between: the
    /// state and the hashes its manifest holds.
    func checked(change: (TempTree) throws -> Void = { _ in }) throws -> (state: IncrementalState, hashes: [String: ContentHash]) {
        let tree = try TempTree()
        try tree.write("out/a", "object a")
        try tree.write("out/b", "object b")
        let graph = try tree.graph(Self.graphText)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        let written = try ["out/a", "out/b"].map { ($0, try #require(ContentHash.ofFile(tree.path($0))).hex) }
        state.restored(files: written)
        try change(tree)
        let index = graph.index(of: "pack")!
        _ = state.check(node: index, needs: [])
        let entries = state.pending[index]?.fingerprint.manifest.entries ?? []
        return (state, Dictionary(uniqueKeysWithValues: entries.map { ($0.path, $0.hash) }))
    }

    @Test func aRestoredFileIsNotHashedAgain() throws {
        let (state, hashes) = try checked()
        #expect(state.statistics.hashed == 0)
        #expect(state.statistics.reused == 2)
        #expect(hashes.count == 2)
    }

    @Test func aRestoredFileRewrittenWithTheSameSizeIsHashedAgain() throws {
        var expected: ContentHash?
        let (state, hashes) = try checked { tree in
            try tree.write("out/a", "object A")
            try tree.touch("out/a", secondsAgo: 5)
            expected = ContentHash.ofFile(tree.path("out/a"))
        }
        #expect(state.statistics.hashed == 1)
        #expect(hashes["out/a"] == expected)
    }

    @Test func aRestoredFileReplacedByARenameIsHashedAgain() throws {
        var expected: ContentHash?
        let (state, hashes) = try checked { tree in
            // Another inode, whatever its size and time.
            try tree.write("out/b.new", "object B")
            try FileManager.default.removeItem(atPath: tree.path("out/b"))
            try FileManager.default.moveItem(atPath: tree.path("out/b.new"), toPath: tree.path("out/b"))
            expected = ContentHash.ofFile(tree.path("out/b"))
        }
        #expect(state.statistics.hashed == 1)
        #expect(hashes["out/b"] == expected)
    }
}
