import Foundation
import MoonGraph
import Testing
@testable import MoonState

/// The stat-only up-to-date check: an unchanged node is found up to date
/// by its check stamp and its files' stats, with no digest taken and no
/// file read; each edge of that shortcut falls back to the full check.
@Suite struct StatOnlyCheckTests {
    static let graphText = """
        version: 1
        nodes:
          gen:
            sources: [src/**/*.txt]
            generates: [out/result]
            run: make-it
          pack:
            sources: [out/*]
            generates: [pack.tar]
            run: tar cf pack.tar out
        """

    /// A run of `node`: checked, and when stale "run" (its output written) and recorded.
    @discardableResult
    func run(_ tree: TempTree, _ yaml: String = graphText, node: String = "gen", needs: [NeedState] = [],
             output: String = "out/result") throws -> (verdict: Verdict, state: IncrementalState) {
        let graph = try tree.graph(yaml)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        let index = graph.index(of: node)!
        let verdict = state.check(node: index, needs: needs)
        if !verdict.isUpToDate {
            try tree.write(output, "made")
            try tree.touch(output, secondsAgo: 10)
            state.recordSuccess(node: index, outputs: [("k", "v")], values: ["x"])
        }
        state.flush()
        return (verdict, state)
    }

    func settled(_ tree: TempTree, _ files: [String: String]) throws {
        for (name, text) in files {
            try tree.write(name, text)
            try tree.touch(name, secondsAgo: 20)
        }
    }

    /// Whether the check found it up to date by stats alone, reading nothing.
    func statOnly(_ state: IncrementalState) -> Bool {
        state.statOnly == 1 && state.statistics.hashed == 0 && state.statistics.reused == 0
    }

    @Test func anUnchangedNodeIsUpToDateByStatsAlone() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a", "src/deep/b.txt": "b"])
        #expect(!(try run(tree).verdict.isUpToDate))
        let (verdict, state) = try run(tree)
        guard case .upToDate(let outputs, let values) = verdict else {
            Issue.record("expected up to date")
            return
        }
        #expect(outputs.map { "\($0.0)=\($0.1)" } == ["k=v"] && values == ["x"])
        #expect(statOnly(state))
    }

    /// `touch` without a change: up to date by the content hash, and the new
    /// stat is kept, so the check after it is stat-only again.
    @Test func aTouchedFileIsHashedOnceThenTrustedByItsNewStat() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        try run(tree)
        try tree.touch("src/a.txt", secondsAgo: 5)
        let touched = try run(tree)
        #expect(touched.verdict.isUpToDate && touched.state.statOnly == 0 && touched.state.statistics.hashed == 1)
        #expect(statOnly(try run(tree).state))
    }

    /// An mtime that goes backwards (a file restored from an archive, a
    /// `touch -d` into the past) is a changed stat, not an older one.
    @Test func anMtimeThatGoesBackwardsIsAChange() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        try run(tree)
        try tree.write("src/a.txt", "A")
        try tree.touch("src/a.txt", secondsAgo: 3600)
        #expect(reasons(try run(tree).verdict) == [.sourcesChanged(changed: ["src/a.txt"], added: [], removed: [])])
    }

    /// A file replaced (by a rename) with another of the same size and the
    /// same mtime to the nanosecond: its inode tells them apart.
    @Test func aFileReplacedWithTheSameSizeAndMtimeIsAChange() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        try run(tree)
        var old = stat()
        #expect(lstat(tree.path("src/a.txt"), &old) == 0)
        try tree.write("other", "A")
        var times = [old.st_atim, old.st_mtim]
        #expect(utimensat(AT_FDCWD, tree.path("other"), &times, 0) == 0)
        #expect(rename(tree.path("other"), tree.path("src/a.txt")) == 0)
        var new = stat()
        #expect(lstat(tree.path("src/a.txt"), &new) == 0)
        #expect(new.st_size == old.st_size && new.st_mtim.tv_nsec == old.st_mtim.tv_nsec && new.st_ino != old.st_ino)
        #expect(reasons(try run(tree).verdict) == [.sourcesChanged(changed: ["src/a.txt"], added: [], removed: [])])
    }

    /// The stamp covers the command, the environment and what the needs
    /// left: a change to any of them is found, with its reason.
    @Test func theStampCoversCommandEnvironmentAndNeeds() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        let needs = [NeedState(name: "up", outputs: [("b", "2"), ("a", "1")])]
        try run(tree, needs: needs)
        #expect(statOnly(try run(tree, needs: [NeedState(name: "up", outputs: [("a", "1"), ("b", "2")])]).state))
        #expect(reasons(try run(tree, needs: [NeedState(name: "up", outputs: [("a", "1"), ("b", "3")])]).verdict) == [.needsChanged])
        #expect(reasons(try run(tree, needs: needs).verdict) == [.needsChanged])
        let other = Self.graphText.replacingOccurrences(of: "make-it", with: "make-it-2")
        #expect(reasons(try run(tree, other, needs: needs).verdict) == [.commandChanged])
        let withEnv = other + "\nenv: { X: '1' }\n"
        #expect(reasons(try run(tree, withEnv, needs: needs).verdict) == [.environmentChanged])
        #expect(statOnly(try run(tree, withEnv, needs: needs).state))
    }

    /// A record an older moon wrote has no stamp: the full check decides,
    /// and keeps a stamp for the next one.
    @Test func aRecordWithoutAStampIsCheckedInFullOnce() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        let (_, first) = try run(tree)
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        var record = try #require(try store.nodeStates(graph: first.graphKey)["gen"])
        #expect(record.stamp != nil)
        record.stamp = nil
        try store.saveNodeStates(graph: first.graphKey, [("gen", record)], files: [:])
        let full = try run(tree)
        #expect(full.verdict.isUpToDate && full.state.statOnly == 0)
        #expect(statOnly(try run(tree).state))
    }

    /// A node that started and did not succeed runs again, though no file changed.
    @Test func anUnfinishedNodeIsNotUpToDateByItsStats() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        try run(tree)
        let graph = try tree.graph(Self.graphText)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(state.check(node: 0, needs: []).isUpToDate)
        state.starting(nodes: [0])
        state.flush()
        #expect(reasons(try run(tree).verdict) == [.unfinished])
    }

    /// The stat-only check never makes a cache key: one asked of a node it
    /// found up to date is the full digest, as a check without a store takes it.
    @Test func aCacheKeyIsAlwaysTheFullDigest() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a"])
        try run(tree)
        let (verdict, state) = try run(tree)
        #expect(verdict.isUpToDate && state.statOnly == 1)
        let graph = try tree.graph(Self.graphText)
        let fresh = IncrementalState(graph: graph, store: nil)
        _ = fresh.check(node: 0, needs: [])
        let key = try #require(state.cacheFingerprint(node: 0))
        #expect(key == fresh.cacheFingerprint(node: 0))
    }

    /// A path stat'ed once in a run serves a later glob over it only until a
    /// node starts: then the glob stats it afresh and sees the new output.
    @Test func aStatTakenBeforeANodeStartedIsNotTrustedAfter() throws {
        let tree = try TempTree()
        try settled(tree, ["src/a.txt": "a", "out/result": "made", "pack.tar": "t"])
        try run(tree)
        try run(tree, node: "pack", output: "pack.tar")
        let graph = try tree.graph(Self.graphText)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(state.check(node: 0, needs: []).isUpToDate)
        #expect(state.check(node: 1, needs: []).isUpToDate)
        state.starting(nodes: [0])
        try tree.write("out/result", "made again")
        #expect(reasons(state.check(node: 1, needs: [])) == [.sourcesChanged(changed: ["out/result"], added: [], removed: [])])
    }

    static let sharedHeader = """
        version: 1
        nodes:
          a:
            sources: [shared.h, a.c]
            run: cc a.c
          b:
            sources: [shared.h, b.c]
            run: cc b.c
          gen:
            sources: [gen.c]
            generates: [gen.out]
            run: gen
          pack:
            needs: [gen]
            sources: [side.txt]
            run: pack
        """

    /// An edit's sweep: a node starts early, and the unchanged nodes checked
    /// after it still take each shared file's stat once (nothing that ran
    /// precedes them), not once per node. As ninja's stat taken once per
    /// build, a change after the sweep took it counts in the next run.
    @Test func aNodeNothingRanBeforeKeepsTheStatsTakenBeforeAStart() throws {
        let tree = try TempTree()
        try settled(tree, ["shared.h": "h", "a.c": "a", "b.c": "b", "gen.c": "g", "gen.out": "o", "side.txt": "s"])
        for node in ["a", "b", "gen", "pack"] { try run(tree, Self.sharedHeader, node: node, output: node == "gen" ? "gen.out" : "x") }
        let graph = try tree.graph(Self.sharedHeader)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(state.check(node: 0, needs: []).isUpToDate)
        state.starting(nodes: [2])
        try tree.write("shared.h", "edited during the run")
        let before = state.stats.taken
        #expect(state.check(node: 1, needs: []).isUpToDate)
        #expect(state.stats.taken == before + 1, "only b.c is stat'ed: shared.h's stat stands")
        let next = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        #expect(reasons(next.check(node: 1, needs: [])) == [.sourcesChanged(changed: ["shared.h"], added: [], removed: [])])
    }

    /// A node whose need ran stats afresh, even a file the need wrote
    /// without declaring it, which an earlier check had stat'ed; so does a
    /// node whose need was found up to date (quiet) and then started anyway.
    @Test(arguments: [false, true]) func aNodeWhoseNeedRanSeesWhatItWrote(needFoundUpToDateFirst: Bool) throws {
        let tree = try TempTree()
        try settled(tree, ["gen.c": "g", "gen.out": "o", "side.txt": "s"])
        try run(tree, Self.sharedHeader, node: "gen", output: "gen.out")
        let needs = [NeedState(name: "gen", outputs: [("k", "v")])]
        try run(tree, Self.sharedHeader, node: "pack", needs: needs, output: "x")
        let graph = try tree.graph(Self.sharedHeader)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        if needFoundUpToDateFirst { #expect(state.check(node: 2, needs: []).isUpToDate) }
        #expect(state.stats.stat("side.txt", state.scanner) != nil)
        state.starting(nodes: [2])
        try tree.write("side.txt", "written by gen")
        #expect(reasons(state.check(node: 3, needs: needs)) == [.sourcesChanged(changed: ["side.txt"], added: [], removed: [])])
    }

    func reasons(_ verdict: Verdict) -> [Staleness] {
        if case .stale(let reasons) = verdict { return reasons }
        return []
    }
}

/// The definition stamp of `--resume` is streamed, and is the value the
/// builder gave it, so a record an older moon wrote still resumes.
@Suite struct DefinitionStampTests {
    @Test func theStreamedStampIsTheBuildersForShortAndLongDefinitions() throws {
        for script in ["make-it", String(repeating: "x", count: 70_000)] {
            var streamed = StreamedStamp("definition")
            var built = DigestBuilder("definition")
            for part in [script, "", "é ünicode"] {
                streamed.add(part)
                built.add(part)
            }
            streamed.add(42)
            built.add(42)
            if script.count < 1000 {
                #expect(streamed.tooLong == nil && streamed.value == built.stamp())
            } else {
                #expect(streamed.tooLong != nil)
            }
        }
    }

    /// A stamp's text is the one `String(_:radix:)` gave, zero-padded, so
    /// the per-node stamps of records an older moon wrote still match.
    @Test func aStampsTextIsSixteenLowercaseHexDigits() {
        for value: UInt64 in [0, 1, 0xabc, 0x0123_4567_89ab_cdef, .max] {
            let old = String(value, radix: 16)
            #expect(StreamedStamp.hex(value) == String(repeating: "0", count: 16 - old.count) + old)
        }
    }

    /// What every node shares is a stamp too (a run of nodes without
    /// sources takes no SHA-256), and each of its parts changes it.
    @Test func theSharedStampChangesWithEachSharedPart() throws {
        let tree = try TempTree()
        func stamp(_ head: String) throws -> String {
            let graph = try tree.graph("version: 1\n" + head + "nodes:\n  a:\n    run: echo a\n")
            return IncrementalState(graph: graph, store: nil).sharedDefinitionStamp()
        }
        let plain = try stamp("")
        #expect(plain.utf8.count == 16 && plain.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        #expect(try stamp("") == plain)
        let variants = [try stamp("env:\n  A: \"1\"\n"), try stamp("vars:\n  A: \"1\"\n"), try stamp("cache:\n  key: [\"1\"]\n")]
        #expect(Set(variants + [plain]).count == 4, "\(variants) \(plain)")
    }
}
