import Foundation
import MoonGraph
import Testing
@testable import MoonState

/// The up-to-date check against a real store in a temporary directory.
@Suite struct IncrementalStateTests {
    static let graphText = """
        version: 1
        nodes:
          gen:
            sources: [src/**/*.txt]
            generates: [out/result]
            run: make-it
          use:
            needs: gen
            sources: [use.txt]
            run: use-it
        """

    /// One "run": checks `node`, and when stale "runs" it (creating its output) and records success.
    func run(_ tree: TempTree, _ yaml: String = graphText, node: String = "gen", force: Bool = false,
             needs: [NeedState] = []) throws -> Verdict {
        let graph = try tree.graph(yaml)
        let opened = StateStore.open(graphDirectory: tree.root)
        let state = IncrementalState(graph: graph, store: opened.store, force: force)
        let index = graph.index(of: node)!
        let verdict = state.check(node: index, needs: needs)
        if !verdict.isUpToDate {
            try tree.write("out/result", "made")
            state.recordSuccess(node: index, outputs: [("sum", "2")], values: ["v"])
        }
        state.flush()
        return verdict
    }

    func reasons(_ verdict: Verdict) -> [Staleness] {
        if case .stale(let reasons) = verdict { return reasons }
        return []
    }

    @Test func theIssueSequence() throws {
        let tree = try TempTree()
        try tree.write("src/a.txt", "a")
        try tree.write("src/deep/b.txt", "b")
        try tree.touch("src/a.txt", secondsAgo: 10)
        try tree.touch("src/deep/b.txt", secondsAgo: 10)

        #expect(reasons(try run(tree)) == [.neverRun])
        // Nothing changed: skipped, with the outputs and values of the last success.
        guard case .upToDate(let outputs, let values) = try run(tree) else {
            Issue.record("expected up to date")
            return
        }
        #expect(outputs.map { "\($0.0)=\($0.1)" } == ["sum=2"])
        #expect(values == ["v"])
        // Content changed.
        try tree.write("src/deep/b.txt", "B")
        try tree.touch("src/deep/b.txt", secondsAgo: 5)
        #expect(reasons(try run(tree)) == [.sourcesChanged(changed: ["src/deep/b.txt"], added: [], removed: [])])
        // Touched, same content: up to date.
        try tree.touch("src/deep/b.txt", secondsAgo: 1)
        #expect(try run(tree).isUpToDate)
        // A new file, a removed one.
        try tree.write("src/c.txt", "c")
        try tree.remove("src/a.txt")
        #expect(reasons(try run(tree)) == [.sourcesChanged(changed: [], added: ["src/c.txt"], removed: ["src/a.txt"])])
        // Output deleted.
        try tree.remove("out/result")
        #expect(reasons(try run(tree)) == [.outputMissing("out/result")])
        // Command changed.
        #expect(reasons(try run(tree, Self.graphText.replacingOccurrences(of: "make-it", with: "make-it-better"))) == [.commandChanged])
        // Forced.
        #expect(reasons(try run(tree, Self.graphText.replacingOccurrences(of: "make-it", with: "make-it-better"), force: true)) == [.forced])
        // Environment changed.
        let withEnv = Self.graphText.replacingOccurrences(of: "make-it", with: "make-it-better") + "\nenv: { X: '1' }\n"
        #expect(reasons(try run(tree, withEnv)) == [.environmentChanged])
        #expect(try run(tree, withEnv).isUpToDate)
    }

    @Test func theOutputsOfNeedsArePartOfTheFingerprint() throws {
        let tree = try TempTree()
        try tree.write("use.txt", "u")
        let one = [NeedState(name: "gen", outputs: [("k", "1")])]
        #expect(reasons(try run(tree, node: "use", needs: one)) == [.neverRun])
        #expect(try run(tree, node: "use", needs: one).isUpToDate)
        #expect(reasons(try run(tree, node: "use", needs: [NeedState(name: "gen", outputs: [("k", "2")])])) == [.needsChanged])
    }

    @Test func anUnchangedFileIsNotReadAgain() throws {
        let tree = try TempTree()
        for i in 0..<50 { try tree.write("src/f\(i).txt", "\(i)") }
        for i in 0..<50 { try tree.touch("src/f\(i).txt", secondsAgo: 10) }
        let graph = try tree.graph(Self.graphText)
        let first = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        _ = first.check(node: 0, needs: [])
        #expect(first.statistics.hashed == 50)
        first.flush()
        let second = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        _ = second.check(node: 0, needs: [])
        #expect(second.statistics.hashed == 0)
        #expect(second.statistics.reused == 50)
    }

    @Test func aFileHashedRightAfterItsWriteIsHashedAgain() throws {
        let tree = try TempTree()
        let graph = try tree.graph(Self.graphText)
        let first = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        // Written right before the check, so it is hashed within the racy margin.
        try tree.write("src/a.txt", "a")
        _ = first.check(node: 0, needs: [])
        first.flush()
        let second = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        _ = second.check(node: 0, needs: [])
        // Racily clean: a same-size write in the same clock tick would not show in the stat.
        #expect(second.statistics.hashed == 1)
    }

    /// A store an older moon wrote has no `patterns` column: it is read
    /// (the digest taken anew) and a writer adds the column; what it says
    /// stays true.
    @Test func aStoreWithoutThePatternsColumnIsReadAndGetsIt() throws {
        let tree = try TempTree()
        try tree.write("src/a.txt", "a")
        #expect(!(try run(tree)).isUpToDate)
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        #expect(try store.nodeStates(graph: "moon.yaml")["gen"]?.patterns != nil)
        try store.db.write { try $0.execute(sql: "ALTER TABLE node_state DROP COLUMN patterns") }
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false).store)
        #expect(!reader.hasPatterns)
        let old = try #require(try reader.nodeStates(graph: "moon.yaml")["gen"])
        #expect(old.patterns == nil)
        #expect(try run(tree).isUpToDate)
        #expect(try #require(StateStore.open(graphDirectory: tree.root, create: false).store).hasPatterns)
        try tree.write("src/a.txt", "changed")
        #expect(!(try run(tree)).isUpToDate)
        #expect(try run(tree).isUpToDate)
    }

    @Test func nodesWithoutSourcesAlwaysRun() throws {
        let tree = try TempTree()
        let graph = try tree.graph("version: 1\nnodes:\n  a: { run: x }\n")
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        guard case .untracked = state.check(node: 0, needs: []) else {
            Issue.record("expected untracked")
            return
        }
    }

    @Test func withoutAStoreEverythingRuns() throws {
        let tree = try TempTree()
        try tree.write("src/a.txt", "a")
        let graph = try tree.graph(Self.graphText)
        let state = IncrementalState(graph: graph, store: nil)
        #expect(reasons(state.check(node: 0, needs: [])) == [.noStore])
        state.recordSuccess(node: 0, outputs: [], values: [])
        state.flush()
    }

    /// `dir:` as fingerprinted: relative to the graph file, spelled one way.
    @Test func theFingerprintedDirectoryIgnoresHowItIsSpelled() {
        #expect(IncrementalState.fingerprintedDirectory(nil) == ".")
        #expect(IncrementalState.fingerprintedDirectory("") == ".")
        #expect(IncrementalState.fingerprintedDirectory("./") == ".")
        #expect(IncrementalState.fingerprintedDirectory("./sub//deep/.") == "sub/deep")
        #expect(IncrementalState.fingerprintedDirectory("/abs/./x/") == "/abs/x")
        #expect(IncrementalState.fingerprintedDirectory("a/../b") == "a/../b", "no lexical '..': a may be a link")
    }

    /// Depfile paths (relative to the node's dir) as kept: relative to the graph file.
    @Test func depfilePathsAreKeptRelativeToTheGraphFile() {
        #expect(IncrementalState.path("include/a.h", in: ".") == "include/a.h")
        #expect(IncrementalState.path("./include/a.h", in: ".") == "include/a.h")
        #expect(IncrementalState.path("../include/a.h", in: "build") == "build/../include/a.h")
        #expect(IncrementalState.path("/usr/include/stdio.h", in: "build") == "/usr/include/stdio.h")
    }
}
