import Foundation
import GRDB
import MoonGraph
import Testing
@testable import MoonState

/// `moon why`'s parts: what is stored at a success (and only then), how
/// two sets of parts differ, and that a secret's value is never kept.
@Suite struct FingerprintPartsTests {
    static let graphText = """
        version: 1
        env:
          DB_PASSWORD: hunter2
          MODE: fast
        nodes:
          gen:
            sources: [src/*.txt]
            generates: [out/result]
            run: |
              make-it
              echo done
        """

    /// One run of `gen`: checked, and when stale "run" and recorded.
    @discardableResult
    func run(_ tree: TempTree, _ yaml: String = graphText) throws -> Verdict {
        let graph = try tree.graph(yaml)
        let state = IncrementalState(graph: graph, store: StateStore.open(graphDirectory: tree.root).store)
        let verdict = state.check(node: 0, needs: [])
        if !verdict.isUpToDate {
            try tree.write("out/result", "made")
            state.recordSuccess(node: 0, outputs: [], values: [])
        }
        state.flush()
        return verdict
    }

    func recorded(_ tree: TempTree) throws -> (last: FingerprintParts?, previous: FingerprintParts?)? {
        let store = try #require(StateStore.open(graphDirectory: tree.root, create: false).store)
        return try store.whyParts(graph: "moon.yaml", node: "gen")
    }

    /// The rows of `node_why` as stored (text), straight from SQLite.
    func rawRows(_ tree: TempTree) throws -> [String] {
        let db = try DatabaseQueue(path: tree.path(".moon/state.db"))
        return try db.read { try String.fetchAll($0, sql: "SELECT parts || coalesce(previous, '') FROM node_why") }
    }

    @Test func aSuccessStoresItsPartsAndANoOpWritesNone() throws {
        let tree = try TempTree()
        try tree.write("src/a.txt", "a")
        try tree.touch("src/a.txt", secondsAgo: 10)
        try run(tree)
        let first = try #require(try recorded(tree)?.last)
        #expect(first.files.map(\.path) == ["src/a.txt"])
        #expect(first.files.first?.size == 1)
        #expect(first.environment.map(\.name) == ["DB_PASSWORD", "MODE"])
        #expect(first.environment.allSatisfy { $0.value == nil })
        #expect(first.command.contains("make-it"))
        #expect(try recorded(tree)?.previous == nil)
        let rows = try rawRows(tree)
        // A no-op (up to date by stats) writes nothing: the row is as it was.
        #expect(try run(tree).isUpToDate)
        #expect(try rawRows(tree) == rows)
        // The next success keeps the one before as `previous`.
        try tree.write("src/a.txt", "abc")
        try tree.touch("src/a.txt", secondsAgo: 5)
        #expect(!(try run(tree).isUpToDate))
        let both = try #require(try recorded(tree))
        #expect(both.previous == first)
        let changes = try #require(both.last).changes(since: first)
        #expect(changes.count == 1)
        guard case .file(let path, let old?, let new?)? = changes.first else {
            Issue.record("expected a changed file, got \(changes)")
            return
        }
        #expect(path == "src/a.txt" && old.size == 1 && new.size == 3 && old.hash != new.hash)
    }

    @Test func noValueOfASecretLookingVariableIsStored() throws {
        let tree = try TempTree()
        try tree.write("src/a.txt", "a")
        try run(tree)
        let rows = try rawRows(tree)
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { !$0.contains("hunter2") && !$0.contains("fast") }, "\(rows)")
        try run(tree, Self.graphText.replacingOccurrences(of: "hunter2", with: "hunter3"))
        let last = try #require(try recorded(tree)?.last)
        let first = try #require(try recorded(tree)?.previous)
        let changes = last.changes(since: first)
        #expect(changes == [.environment(kind: "env", name: "DB_PASSWORD", change: "changed", value: nil, secret: true)])
        #expect(changes[0].summary == "environment variable DB_PASSWORD changed (value hidden: the name looks secret)")
    }

    @Test func partsSurviveTheirJSON() throws {
        var parts = FingerprintParts(
            command: "run (sh):\n  echo \"hi\"",
            environment: [.init(kind: "env", name: "A", digest: "0123456789abcdef")],
            vars: [.init(kind: "var", name: "level", digest: "fedcba9876543210", value: "2")],
            needs: [.init(name: "gen", result: "success", outputs: [.init(kind: "output", name: "n", digest: "00")], values: "")],
            files: [.init(path: "src/ä b.txt", size: 12, hash: "aaaaaaaaaaaaaaaa")],
            patterns: ["sources: src/*.txt"])
        parts.forced = true
        parts.at = 1_700_000_000.5
        parts.fingerprint = "ff"
        #expect(FingerprintParts(json: parts.json) == parts)
        // The text is stored (`.moon/`, cache entries): its form stays as it was.
        #expect(parts.json == #"{"v":1,"at":1700000000.500,"fingerprint":"ff","forced":true,"command":"run (sh):\n  echo \"hi\"","#
            + #""env":[["env","A","0123456789abcdef"]],"vars":[["var","level","fedcba9876543210","2"]],"#
            + #""needs":[["gen","success","",[["n","00"]]]],"files":[["src/ä b.txt",12,"aaaaaaaaaaaaaaaa"]],"#
            + #""patterns":["sources: src/*.txt"]}"#)
        // Hostile or foreign text is no parts, and never a trap.
        for text in ["", "[]", "{\"v\":2,\"command\":\"x\"}", "{\"v\":1}", "{\"v\":1,\"command\":\"x\",\"files\":[[1,2,3],[\"a\",\"b\"]]}"] {
            let read = FingerprintParts(json: text)
            #expect(read == nil || read!.files.isEmpty, "\(text)")
        }
    }

    /// A command's lines are split as a split by Characters splits them: at
    /// each line feed, but not inside a CR LF, which is one Character.
    @Test func aCommandSplitsIntoLinesAsCharactersDo() {
        for text in ["", "a", "a\nb", "a\n", "\n\n", "a\r\nb\nc", "\r\n", "\r\r\n\n", "é\u{301}\nx", "a\n\u{301}b", "\u{2028}\n"] {
            #expect(IncrementalState.lines(of: text) == text.split(separator: "\n", omittingEmptySubsequences: false), "\(Array(text.utf8))")
        }
    }

    /// `at` is written with three decimals, as `%.3f` wrote it.
    @Test func theMomentIsWrittenToTheMillisecond() {
        #expect(FingerprintParts.seconds(1_700_000_000.5) == "1700000000.500")
        #expect(FingerprintParts.seconds(1_700_000_000.0123) == "1700000000.012")
        #expect(FingerprintParts.seconds(0.0999) == "0.100")
        #expect(FingerprintParts.seconds(-1.25) == "-1.250")
        for odd in [Double.nan, .infinity, -.infinity, 1e300] { #expect(FingerprintParts.seconds(odd) == "0.000") }
    }

    @Test func aCommandDiffShowsRemovedThenAddedLines() {
        let diff = FingerprintParts.lineDiff("a\nb\nc", "a\nB\nc\nd")
        #expect(diff == ["  a", "- b", "+ B", "  c", "+ d"])
    }

    @Test func namesThatLookSecret() {
        for name in ["GITHUB_TOKEN", "api_key", "DB_PASSWORD", "aws_secret_access_key", "NPM_AUTH", "Credentials_File"] {
            #expect(WhyRedaction.looksSecret(name), "\(name)")
        }
        for name in ["MODE", "CC", "CFLAGS", "PATH", "level"] { #expect(!WhyRedaction.looksSecret(name), "\(name)") }
    }

    @Test func needsAndVarsAreNamed() {
        let old = FingerprintParts(command: "c", environment: [], vars: [.init(kind: "var", name: "level", digest: "1", value: "1")],
                                   needs: [.init(name: "gen", result: "success", outputs: [.init(kind: "output", name: "n", digest: "a")], values: "")],
                                   files: [], patterns: [])
        var new = old
        new.vars[0] = .init(kind: "var", name: "level", digest: "2", value: "2")
        new.needs[0].outputs[0].digest = "b"
        let changes = new.changes(since: old)
        #expect(changes.map(\.summary) == ["var level changed: '1' -> '2'",
                                           "need 'gen' ran and changed what it left: output n changed"])
    }
}
