import Foundation
import Glibc
import Testing
@testable import MoonCache

/// The cache's usage ledger: a run that stored something lists the cache
/// only when the ledger says it may be past its limit, or cannot say.
@Suite struct UsageLedgerTests {
    /// A cache with one stored node, the ledger written by a listing, in a scratch directory.
    func storedCache(_ name: String) throws -> (root: String, directory: CacheDirectory, graph: String) {
        let root = try scratchDirectory(name)
        let graph = root + "/graph"
        try FileManager.default.createDirectory(atPath: graph + "/out", withIntermediateDirectories: true)
        try Data(String(repeating: "x", count: 10_000).utf8).write(to: URL(fileURLWithPath: graph + "/out/a.o"))
        let directory = CacheDirectory(path: root + "/cache")
        store(directory, graph: graph, key: "1", limit: 1 << 40)
        return (root, directory, graph)
    }

    func store(_ directory: CacheDirectory, graph: String, key: Character, limit: Int64) {
        let cache = OutputCache(directory: directory, root: graph, limit: limit)
        cache.store(CacheKey(hex: String(repeating: key, count: 64))!, node: "n", declared: DeclaredOutputs(generates: ["out/a.o"]),
                    outputs: [], values: [], dependencies: [])
        cache.finish()
    }

    /// The first run lists the cache and notes its total; later runs add
    /// what they stored (an entry and its blob, in blocks) without listing.
    @Test func runsAddWhatTheyStored() throws {
        let (root, directory, graph) = try storedCache("ledger-add")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let listed = CacheUsage.measure(directory).bytes
        #expect(CacheUsage.measure(directory).entries == 1, "a second listing in one process sees the entry")
        #expect(UsageLedger.estimate(directory) == listed)
        try Data(String(repeating: "y", count: 10_000).utf8).write(to: URL(fileURLWithPath: graph + "/out/a.o"))
        store(directory, graph: graph, key: "2", limit: 1 << 40)
        #expect(UsageLedger.estimate(directory) == listed + 4096 + 12_288)
        #expect(CacheUsage.measure(directory).bytes <= UsageLedger.estimate(directory)!, "it errs high, never low")
    }

    /// While the ledger says there is room, a run does not list the cache
    /// (a cache past its limit behind a ledger's back stays); once what
    /// runs added passes the limit, it is pruned and the ledger starts anew.
    @Test func aCacheIsPrunedWhenTheLedgerSaysItMayBeFull() throws {
        let (root, directory, graph) = try storedCache("ledger-prune")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let listed = CacheUsage.measure(directory).bytes
        UsageLedger.reset(directory, total: 0)
        CacheUsage.keep(directory, within: listed - 1, adding: 1)
        #expect(CacheUsage.measure(directory).entries == 1, "the ledger said 1 byte: nothing listed, nothing pruned")
        CacheUsage.keep(directory, within: listed - 1, adding: listed)
        #expect(CacheUsage.measure(directory).entries == 0)
        #expect(UsageLedger.estimate(directory) == CacheUsage.measure(directory).bytes)
        _ = graph
    }

    /// A ledger that is missing, old, malformed or not a plain file says
    /// nothing: the run lists the cache (and prunes a cache past its limit).
    @Test func aLedgerThatCannotSayMakesTheRunList() throws {
        let (root, directory, _) = try storedCache("ledger-bad")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ledger = root + "/cache/v1/usage"
        let day = Date().timeIntervalSince1970 - 86_401
        let bad: [(String, () throws -> Void)] = [
            ("missing", {}),
            ("a day old", { try Data("moon-cache-usage 1 0 \(Int64(day))\n".utf8).write(to: URL(fileURLWithPath: ledger)) }),
            ("malformed", { try Data("moon-cache-usage 1 0 \(Int64(Date().timeIntervalSince1970))\n-5\n".utf8).write(to: URL(fileURLWithPath: ledger)) }),
            ("a link", { try FileManager.default.createSymbolicLink(atPath: ledger, withDestinationPath: "/dev/null") }),
            ("a FIFO", { #expect(mkfifo(ledger, 0o600) == 0) }),
        ]
        for (what, make) in bad {
            try? FileManager.default.removeItem(atPath: ledger)
            try make()
            #expect(UsageLedger.estimate(directory) == nil, "\(what)")
            UsageLedger.add(100, to: directory)
            CacheUsage.keep(directory, within: 1 << 40, adding: 100)
            #expect(UsageLedger.estimate(directory) == CacheUsage.measure(directory).bytes, "\(what): listed and written anew")
        }
    }

    /// Sizes a remote entry states count saturated, never trapping; and a
    /// ledger with another name (a hard link planted as it) is not ours.
    @Test func hugeSizesSaturateAndALinkedLedgerIsRefused() throws {
        let huge = CacheEntry.File(path: "a", kind: .file, hash: String(repeating: "0", count: 64), size: Int64.max)
        #expect(UsageLedger.footprint(of: [huge, huge], entryBytes: Int.max) == Int64.max)
        #expect(UsageLedger.adding(Int64.max, to: 5) == Int64.max)
        let (root, directory, _) = try storedCache("ledger-link")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ledger = root + "/cache/v1/usage"
        #expect(UsageLedger.estimate(directory) != nil)
        try FileManager.default.linkItem(atPath: ledger, toPath: root + "/elsewhere")
        #expect(UsageLedger.estimate(directory) == nil)
        let before = try Data(contentsOf: URL(fileURLWithPath: root + "/elsewhere"))
        UsageLedger.add(100, to: directory)
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/elsewhere")) == before, "nothing appended through the link")
    }

    @Test func theLedgerIsReadStrictly() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(UsageLedger.parse("moon-cache-usage 1 100 1000000\n+5\n+7\n", now: now) == 112)
        #expect(UsageLedger.parse("moon-cache-usage 1 100 1000000\n+5", now: now) == nil, "a line cut short")
        #expect(UsageLedger.parse("moon-cache-usage 2 100 1000000\n", now: now) == nil)
        #expect(UsageLedger.parse("moon-cache-usage 1 100 1003600\n", now: now) == nil, "from the future")
        #expect(UsageLedger.parse("moon-cache-usage 1 9223372036854775807 1000000\n+1\n", now: now) == nil, "overflow")
        #expect(UsageLedger.parse("", now: now) == nil)
    }
}
