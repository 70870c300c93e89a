import Foundation
import GRDB
import Testing
@testable import MoonState

/// The history of runs that changed nothing else in the store goes to a
/// journal beside it (`HistoryJournal`), and every reader of the history
/// finds those runs, each once.
@Suite struct HistoryJournalTests {
    static func run(_ name: String, at seconds: Double, trace: String? = nil) -> RunRecord {
        var run = RunRecord(graph: "moon.yaml", startedAt: Date(timeIntervalSince1970: seconds), durationMilliseconds: 12, ok: true)
        var node = NodeRunRecord(node: name, startedAt: run.startedAt, durationMilliseconds: 12, result: .succeeded, attempts: 1)
        node.cpuMilliseconds = 3
        node.maxRSSBytes = 1 << 20
        run.nodes = [node]
        run.succeeded = 1
        run.trace = trace
        return run
    }

    func journal(_ tree: TempTree) -> String { tree.path(".moon/history.journal") }

    @Test func aRunReadsBackAsItWasWritten() {
        // (A node's start is kept in whole milliseconds, the run's as it is.)
        var run = Self.run("n\u{e9}ud \u{1F319}", at: 1_796_000_000.125, trace: "{\"a\":\"line\\nbreak\"}\n\ttab \u{7}")
        run.interrupted = true
        run.ok = false
        run.forced = true
        run.failed = 2
        run.canceled = 3
        let back = HistoryJournal.decode(HistoryJournal.encode(run) + HistoryJournal.encode(Self.run("b", at: 5)))
        #expect(back.count == 2)
        let first = back[0]
        #expect(first.graph == run.graph && first.startedAt == run.startedAt && first.durationMilliseconds == 12)
        #expect(!first.ok && first.interrupted && first.forced && first.failed == 2 && first.canceled == 3 && first.succeeded == 1)
        #expect(first.nodes == run.nodes)
        #expect(first.trace == run.trace)
        #expect(back[1].trace == nil && back[1].nodes.map(\.node) == ["b"])
    }

    /// A store this process did not change keeps its files as they were:
    /// the run is appended to the journal. A read of the history takes the
    /// journal's runs in, in order, and empties it.
    @Test func aRunThatChangedNothingIsJournaledAndReadersTakeItOnce() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        let before = NoopSnapshot.stamps(store: store.path)
        try store.record(Self.run("a", at: 10))
        try store.record(Self.run("b", at: 20))
        #expect(NoopSnapshot.stamps(store: store.path) == before, "the store's files were written")
        #expect(HistoryJournal.decode(Array(try Data(contentsOf: URL(fileURLWithPath: journal(tree))))).count == 2)

        // Another process reading the history (an opening without `create`).
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false).store)
        #expect(try reader.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes.map(\.node) } == [["b"], ["a"]])
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal(tree))).isEmpty)
        // This process's own read (a writer's) takes what came since.
        try store.record(Self.run("c", at: 30))
        #expect(try store.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes.map(\.node) } == [["c"], ["b"], ["a"]])
        #expect(try store.trace(graph: "moon.yaml", run: nil) == nil)
    }

    /// A run that wrote to the store (node states) records there, and takes
    /// the journal's older runs in before it, in one transaction.
    @Test func aRunThatChangedTheStoreTakesTheJournalWithIt() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.record(Self.run("journaled", at: 10, trace: "{}"))
        try store.changeHere()
        try store.record(Self.run("stored", at: 20))
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal(tree))).isEmpty)
        let runs = try store.recentRuns(graph: "moon.yaml", limit: 10)
        #expect(runs.map { $0.nodes.map(\.node) } == [["stored"], ["journaled"]])
        #expect(runs[1].id < runs[0].id)
        #expect(try store.trace(graph: "moon.yaml", run: runs[1].id)?.trace == "{}")
        #expect(try store.lastDurations(graph: "moon.yaml") == ["journaled": 12, "stored": 12])
    }

    /// Learning reads the journal's runs as the newest, and takes none in.
    @Test func learningReadsTheJournalWithoutTakingIt() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.changeHere()
        try store.record(Self.run("a", at: 10))
        let next = try #require(StateStore.open(graphDirectory: tree.root).store)
        try next.record(Self.run("b", at: 20))
        try next.record(Self.run("c", at: 30))
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false, foldsHistory: false).store)
        #expect(try reader.recentSuccesses(graph: "moon.yaml", limit: 10).map(\.node) == ["a", "b", "c"])
        #expect(try reader.recentSuccesses(graph: "moon.yaml", limit: 2).map(\.node) == ["b", "c"])
        #expect(HistoryJournal.peek(store: store.path).count == 2)
    }

    /// Learning's bound: the largest peak of the runs it would read, in the
    /// store and in the journal, read without their nodes. A run whose peak
    /// is not recorded (an older moon's row or record) leaves it unknown.
    @Test func thePeakOfTheRecentRunsIsReadWithoutTheirNodes() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.changeHere()
        var stored = Self.run("a", at: 10)
        stored.nodes[0].maxRSSBytes = 5 << 20
        try store.record(stored)
        let next = try #require(StateStore.open(graphDirectory: tree.root).store)
        var journaled = Self.run("b", at: 20)
        journaled.nodes[0].maxRSSBytes = 7 << 20
        journaled.nodes.append(NodeRunRecord(node: "c", result: .upToDate))
        try next.record(journaled)
        #expect(HistoryJournal.peek(store: store.path).count == 1)
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false, foldsHistory: false).store)
        #expect(reader.recentPeak(graph: "moon.yaml", limit: 20) == 7 << 20)
        #expect(reader.recentPeak(graph: "other.yaml", limit: 20) == 0)
        // A record torn after its head still counts: a bound may be larger, never smaller.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: journal(tree))))
        var torn = Self.run("d", at: 30)
        torn.nodes[0].maxRSSBytes = 9 << 20
        bytes += Array(HistoryJournal.encode(torn).dropLast(8))
        try Data(bytes).write(to: URL(fileURLWithPath: journal(tree)))
        #expect(reader.recentPeak(graph: "moon.yaml", limit: 20) == 9 << 20)
        // An older moon's record, without its peak.
        let old = String(decoding: HistoryJournal.encode(Self.run("e", at: 40)), as: UTF8.self).replacingOccurrences(of: ",\"peak\":1048576", with: "")
        try Data(bytes + Array(old.utf8)).write(to: URL(fileURLWithPath: journal(tree)))
        #expect(HistoryJournal.peek(store: store.path).map { $0.nodes[0].node } == ["b", "e"])
        #expect(reader.recentPeak(graph: "moon.yaml", limit: 20) == nil)
        // An older moon's row.
        try Data(bytes).write(to: URL(fileURLWithPath: journal(tree)))
        try store.db.write { try $0.execute(sql: "UPDATE runs SET peak = NULL") }
        #expect(reader.recentPeak(graph: "moon.yaml", limit: 20) == nil)
    }

    /// A journal taken in, whose emptying did not happen (moon killed
    /// between the commit and the truncation), adds no run the second time.
    @Test func aJournalTakenTwiceAddsEachRunOnce() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try store.record(Self.run("a", at: 10))
        try store.record(Self.run("b", at: 20))
        let held = try #require(HistoryJournal.take(store: store.path))
        try store.db.writeWithoutTransaction { db in try SQLiteRows.transaction(db) { try StateStore.fold(held.runs, in: db) } }
        held.release()
        try store.record(Self.run("c", at: 30))
        #expect(try store.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes.map(\.node) } == [["c"], ["b"], ["a"]])
    }

    /// A torn record (a full disk), a line of garbage or of the wrong
    /// types is left out; the records around it are taken.
    @Test func whatIsNotARecordIsLeftOut() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        var bytes = HistoryJournal.encode(Self.run("a", at: 10))
        bytes += Array(HistoryJournal.encode(Self.run("torn", at: 15)).prefix(40))
        bytes += Array("\n{\"graph\":1,\"started\":\"x\"}\n\u{1B}[31mnot json\n[1,2]\n".utf8)
        bytes += HistoryJournal.encode(Self.run("b", at: 20))
        try Data(bytes).write(to: URL(fileURLWithPath: journal(tree)))
        #expect(try store.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes.map(\.node) } == [["b"], ["a"]])
    }

    /// The journal is only ever a regular file of moon's: a link, a FIFO or
    /// a lock another process holds is not used, and never waited on; the
    /// run is recorded in the store. (Each run is a process of its own,
    /// with a connection that changed nothing yet.)
    @Test func aJournalThatIsNotAFileOrIsLockedIsLeftAlone() throws {
        let tree = try TempTree()
        func process() throws -> StateStore { try #require(StateStore.open(graphDirectory: tree.root).store) }
        _ = try process()
        try tree.write("target.txt", "mine\n")
        try FileManager.default.createSymbolicLink(atPath: journal(tree), withDestinationPath: tree.path("target.txt"))
        try process().record(Self.run("linked", at: 10))
        #expect(try String(contentsOfFile: tree.path("target.txt"), encoding: .utf8) == "mine\n")
        try FileManager.default.removeItem(atPath: journal(tree))
        #expect(mkfifo(journal(tree), 0o644) == 0)
        try process().record(Self.run("fifo", at: 20))
        try FileManager.default.removeItem(atPath: journal(tree))

        // Locked by another process: appended to no more, and not taken.
        try process().record(Self.run("journaled", at: 30))
        let fd = open(journal(tree), O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        let store = try process()
        try store.record(Self.run("while locked", at: 40))
        #expect(HistoryJournal.take(store: store.path) == nil)
        #expect(HistoryJournal.decode(Array(try Data(contentsOf: URL(fileURLWithPath: journal(tree))))).map { $0.nodes[0].node } == ["journaled"])
        close(fd)
        let runs = try store.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes[0].node }
        #expect(Set(runs) == ["linked", "fifo", "while locked", "journaled"], "\(runs)")
    }

    /// A journal that is a hard link (another user's file), or whose size
    /// is past any journal's (a sparse file of a terabyte), is neither
    /// appended to nor trapped on; a record whose start or length no run
    /// can have is left out.
    @Test func aLinkedOrHugeJournalAndImpossibleRecordsAreLeftAlone() throws {
        let tree = try TempTree()
        let store = try #require(StateStore.open(graphDirectory: tree.root).store)
        try tree.write("theirs.txt", "theirs\n")
        #expect(link(tree.path("theirs.txt"), journal(tree)) == 0)
        #expect(!HistoryJournal.append(Self.run("a", at: 10), store: store.path))
        #expect(HistoryJournal.take(store: store.path) == nil)
        #expect(try String(contentsOfFile: tree.path("theirs.txt"), encoding: .utf8) == "theirs\n")
        try FileManager.default.removeItem(atPath: journal(tree))

        let fd = open(journal(tree), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        if ftruncate(fd, 1 << 40) == 0 {
            #expect(!HistoryJournal.append(Self.run("b", at: 20), store: store.path))
            #expect(HistoryJournal.take(store: store.path)?.runs.isEmpty == true)
        }
        close(fd)
        try FileManager.default.removeItem(atPath: journal(tree))

        var line = Array(String(decoding: HistoryJournal.encode(Self.run("far", at: 30)), as: UTF8.self)
            .replacingOccurrences(of: "\"started\":\"30.0\"", with: "\"started\":\"1e300\"").utf8)
        line += Array(String(decoding: HistoryJournal.encode(Self.run("long", at: 40)), as: UTF8.self)
            .replacingOccurrences(of: "\"ms\":12", with: "\"ms\":9223372036854775807").utf8)
        line += HistoryJournal.encode(Self.run("sound", at: 50))
        #expect(HistoryJournal.decode(line).map { $0.nodes[0].node } == ["sound"])
        #expect(LearnedResources.memory(fromPeaks: [Int64.max]) == Int64.max)
        #expect(LearnedResources.time(fromDurations: [Int.max]) != nil)
    }

    /// Past its limit the journal takes no more: the run is recorded in the
    /// store, with the journal's runs.
    @Test func aFullJournalIsTakenIn() throws {
        let tree = try TempTree()
        let trace = String(repeating: "t", count: 64 * 1024)
        for i in 0..<5 {
            let store = try #require(StateStore.open(graphDirectory: tree.root).store)
            try store.record(Self.run("r\(i)", at: Double(i), trace: trace))
        }
        let size = (try FileManager.default.attributesOfItem(atPath: journal(tree))[.size] as? Int) ?? 0
        #expect(size <= HistoryJournal.limit)
        #expect(HistoryJournal.decode(Array(try Data(contentsOf: URL(fileURLWithPath: journal(tree))))).count == 1, "r4 alone, after r0-r3 went in")
        let reader = try #require(StateStore.open(graphDirectory: tree.root, create: false).store)
        #expect(try reader.recentRuns(graph: "moon.yaml", limit: 10).map { $0.nodes[0].node } == ["r4", "r3", "r2", "r1", "r0"])
        // A run larger than the journal may be, with no journal yet, goes to the store whole.
        let huge = try #require(StateStore.open(graphDirectory: tree.root).store)
        try huge.record(Self.run("huge", at: 9, trace: String(repeating: "h", count: HistoryJournal.limit + 1)))
        #expect(!HistoryJournal.hasRuns(store: huge.path))
        #expect(try huge.trace(graph: "moon.yaml", run: nil)?.trace.count == HistoryJournal.limit + 1)
    }
}
