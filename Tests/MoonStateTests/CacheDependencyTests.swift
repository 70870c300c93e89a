import Foundation
import MoonGraph
import Testing
@testable import MoonState

/// A restore checks the files its cache entry's depfile listed: a header
/// the entries of many nodes list is stat'ed once in a run, while what a
/// node that ran or was restored before it may have written is stat'ed afresh.
@Suite struct CacheDependencyTests {
    static let graphText = """
        version: 1
        nodes:
          gen:
            sources: [gen.in]
            generates: [gen.txt]
            run: cp gen.in gen.txt
          a:
            sources: [a.c]
            generates: [a.o]
            depfile: a.d
            run: cc -c a.c -o a.o -MMD -MF a.d
          b:
            sources: [b.c]
            generates: [b.o]
            depfile: b.d
            run: cc -c b.c -o b.o -MMD -MF b.d
          c:
            needs: [gen]
            sources: [c.c]
            generates: [c.o]
            depfile: c.d
            run: cc -c c.c -o c.o -MMD -MF c.d
        """

    func tree() throws -> (TempTree, Graph, IncrementalState) {
        let tree = try TempTree()
        for name in ["gen.in", "a.c", "b.c", "c.c"] { try tree.write(name, name) }
        try tree.write("h.h", "#define H 1\n")
        // Older than a clock tick: a file hashed just after it was written is not trusted by its stat.
        for name in ["gen.in", "a.c", "b.c", "c.c", "h.h"] { try tree.touch(name, secondsAgo: 5) }
        let graph = try tree.graph(Self.graphText)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        return (tree, graph, state)
    }

    @Test func aHeaderTheEntriesOfManyNodesListIsStatedAndHashedOnce() throws {
        let (tree, graph, state) = try tree()
        let header = try #require(ContentHash.ofFile(tree.path("h.h")))
        for name in ["a", "b"] {
            let index = try #require(graph.index(of: name))
            _ = state.check(node: index, needs: [])
            // A restore writes its outputs as a started node would.
            state.filesChanging(node: index)
            #expect(state.currentEntries(node: index, of: [("h.h", header)])?.map(\.path) == ["h.h"])
            #expect(state.dependencyStats == 1, "h.h stat'ed once, for a; b's restore asks the memo")
        }
        #expect(state.statistics.hashed == 3, "a.c, b.c and h.h")
    }

    /// The headers a node's last success recorded (stat and hash, in its
    /// manifest) answer for its cache entry's: an edit's check of a dozen
    /// nodes does not ask the store's stat cache about each header they
    /// list (past `StatCache.lookupLimit` questions it reads the whole table).
    @Test func theNodesLastManifestAnswersForItsHeaders() throws {
        let (tree, graph, first) = try tree()
        let a = try #require(graph.index(of: "a"))
        _ = first.check(node: a, needs: [])
        try tree.write("a.o", "obj")
        try tree.write("a.d", "a.o: a.c h.h\n")
        for name in ["a.o", "a.d"] { try tree.touch(name, secondsAgo: 5) }
        first.recordSuccess(node: a, outputs: [], values: [])
        first.flush()
        // The stat cache forgets every file: only a's manifest knows h.h.
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.db.writeWithoutTransaction { try $0.execute(sql: "DELETE FROM files") }
        let header = try #require(ContentHash.ofFile(tree.path("h.h")))
        let next = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(next.currentEntries(node: a, of: [("h.h", header)])?.map(\.path) == ["h.h"])
        #expect(next.statistics.hashed == 0, "h.h's hash came from a's manifest")
        // In a later run, a header changed since is read again, and is not the entry's.
        try tree.write("h.h", "#define H 3\n")
        let later = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(later.currentEntries(node: a, of: [("h.h", header)]) == nil)
        #expect(later.statistics.hashed == 1)
    }

    @Test func aChangedHeaderIsNotTheEntrysHeader() throws {
        let (tree, graph, state) = try tree()
        let old = try #require(ContentHash.ofFile(tree.path("h.h")))
        let index = try #require(graph.index(of: "a"))
        try tree.write("h.h", "#define H 2\n")
        #expect(state.currentEntries(node: index, of: [("h.h", old)]) == nil)
    }

    /// `gen`'s command may write files it does not declare: once it
    /// started, `c`, which needs it, finds the header as it is now.
    @Test func aNodeWhoseNeedRanStatsItsDependenciesAfresh() throws {
        let (tree, graph, state) = try tree()
        let a = try #require(graph.index(of: "a")), c = try #require(graph.index(of: "c"))
        let gen = try #require(graph.index(of: "gen"))
        let old = try #require(ContentHash.ofFile(tree.path("h.h")))
        #expect(state.currentEntries(node: a, of: [("h.h", old)]) != nil)
        state.starting(nodes: [gen])
        try tree.write("h.h", "#define H 22\n")
        let new = try #require(ContentHash.ofFile(tree.path("h.h")))
        #expect(state.currentEntries(node: c, of: [("h.h", old)]) == nil)
        #expect(state.currentEntries(node: c, of: [("h.h", new)])?.first?.hash == new)
    }

    /// A file hashed by reads up to the size its stat gave, at and around
    /// the read buffer's size (64 KiB): the digest of every byte.
    @Test(arguments: [
        (0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (1, "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
        (65535, "dda402a2c028f0cbbdbc5c6ebae965eed9c75f71236e7022b0386d3455d5ae2f"),
        (65536, "4b640d85ab3ba30fd02c9fc9db4a8928f416322ad27022ea58a65aaee68a4df2"),
        (65537, "237356e18b503616912abb8ffaed3a72591e397d4ac294c4637917d48a3f529d"),
        (131072, "feb1e4409d009e0ec502eaabe321f86b5197a881e9b765252ec8a75d6957596d"),
        (200000, "e24bc62381f1224fbbb74688663f8f9743b9680b193edd666835e97b06e730eb"),
    ])
    func aFileIsHashedWhole(size: Int, hex: String) throws {
        let tree = try TempTree()
        let bytes = (0..<size).map { UInt8($0 % 251) }
        try Data(bytes).write(to: URL(fileURLWithPath: tree.path("f")))
        #expect(ContentHash.ofFile(tree.path("f"))?.hex == hex)
    }
}
