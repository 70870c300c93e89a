import Foundation
import Testing
@testable import MoonCache

/// Cache entries may come from a remote server: one that would write
/// outside the graph's directory, or through a link it restores, is refused.
@Suite struct CacheEntryTests {
    static func entry(_ files: [CacheEntry.File], roots: [String] = ["out"]) -> CacheEntry {
        CacheEntry(node: "n", roots: roots, files: files, outputs: [("k", "v")], values: ["x"])
    }

    static let hash = String(repeating: "a", count: 64)

    @Test func aSoundEntryRoundTrips() throws {
        let entry = Self.entry([.init(path: "out", kind: .directory, mode: 0o755),
                                .init(path: "out/a", kind: .file, mode: 0o644, hash: Self.hash, size: 3),
                                .init(path: "out/l", kind: .symlink, target: "a")])
        let decoded = try CacheEntry.decode(try entry.encoded())
        #expect(decoded == entry)
        #expect(decoded.bytes == 3)
        #expect(decoded.outputPairs.map(\.0) == ["k"])
    }

    /// The reader reads what `encoded` writes: escapes, non-ASCII, a
    /// depfile's dependencies, every kind of file, sizes past 32 bits.
    @Test func theReaderReadsWhatIsWritten() throws {
        let entry = CacheEntry(node: "say \"hi\"\t/x é", roots: ["out"],
                               files: [.init(path: "out", kind: .directory, mode: 0o755),
                                       .init(path: "out/a b", kind: .file, mode: 0o4755, hash: Self.hash, size: 1 << 40),
                                       .init(path: "out/l", kind: .symlink, target: "../a\\b")],
                               outputs: [("k", "line\nnext"), ("empty", "")], values: ["\u{1}", "é😀", "\u{2028}"],
                               dependencies: [.init(path: "include/h.h", hash: Self.hash)])
        #expect(try CacheEntry.decode(try entry.encoded()) == entry)
    }

    /// What an entry looks like on disk (and to another moon): keys sorted,
    /// no spaces, a missing optional left out, slashes as they are.
    @Test func anEntryIsWrittenWithSortedKeys() throws {
        var entry = CacheEntry(node: "lib/a.o", roots: ["out"],
                               files: [.init(path: "out", kind: .directory, mode: 0o755),
                                       .init(path: "out/a", kind: .file, mode: 0o644, hash: Self.hash, size: 3),
                                       .init(path: "out/l", kind: .symlink, target: "a")],
                               outputs: [("k", "v\tw")], values: ["x"], dependencies: [.init(path: "include/h.h", hash: Self.hash)])
        entry.why = "{\"a\":1}"
        let h = Self.hash
        #expect(String(decoding: try entry.encoded(), as: UTF8.self) == #"{"dependencies":[{"hash":"\#(h)","path":"include/h.h"}],"#
            + #""files":[{"kind":"directory","mode":493,"path":"out"},{"hash":"\#(h)","kind":"file","mode":420,"path":"out/a","size":3},"#
            + #"{"kind":"symlink","path":"out/l","target":"a"}],"node":"lib/a.o","outputs":[["k","v\tw"]],"roots":["out"],"#
            + #""values":["x"],"version":1,"why":"{\"a\":1}"}"#)
        entry.why = nil
        #expect(!String(decoding: try entry.encoded(), as: UTF8.self).contains("why"))
    }

    /// A restore reads an entry without its fingerprint's parts (`why`),
    /// which only `moon why` reads; they are still checked: a `why` that is
    /// not a string, or a string that is not JSON's, is no entry either way.
    @Test func thePartsAreLeftOutOnlyWhenAsked() throws {
        var entry = Self.entry([.init(path: "out", kind: .file, mode: 0o644, hash: Self.hash, size: 3)])
        entry.why = "{\"command\":\"cc -c \\\"a b\\\".c\",\"é\":[1]}"
        let data = try entry.encoded()
        #expect(try CacheEntry.decode(data) == entry)
        var without = entry
        without.why = nil
        #expect(try CacheEntry.decode(data, parts: false) == without)
        let text = String(decoding: data, as: UTF8.self)
        let whyAt = try #require(text.range(of: #""why":"#))
        for bad in [#""why":7}"#, #""why":"\q"}"#, #""why":"a\#u{1}b"}"#, #""why":"unended}"#, #""why":"x","why":"y"}"#] {
            let broken = Data((String(text[..<whyAt.lowerBound]) + bad).utf8)
            #expect(throws: CacheError.self, "\(bad)") { try CacheEntry.decode(broken) }
            #expect(throws: CacheError.self, "\(bad)") { try CacheEntry.decode(broken, parts: false) }
        }
        let null = Data((String(text[..<whyAt.lowerBound]) + #""why":null}"#).utf8)
        #expect(try CacheEntry.decode(null, parts: false) == without)
        #expect(try CacheEntry.decode(null) == without)
    }

    /// Keys in any order and spacing; a key it does not know is ignored (a
    /// newer moon may add one).
    @Test func theReaderTakesAnyOrderAndIgnoresUnknownKeys() throws {
        let entry = Self.entry([.init(path: "out", kind: .directory, mode: 0o755),
                                .init(path: "out/a", kind: .file, mode: 0o644, hash: Self.hash, size: 3)])
        let spaced = """
            {
              "version" : 1, "node" : "n", "roots" : [ "out" ],
              "files" : [ { "path" : "out", "mode" : 493, "kind" : "directory" },
                          { "size" : 3, "path" : "out/a", "kind" : "file", "hash" : "\(Self.hash)", "mode" : 420 } ],
              "outputs" : [ [ "k", "v" ] ], "values" : [ "x" ], "dependencies" : [ ]
            }
            """
        #expect(try CacheEntry.decode(Data(spaced.utf8)) == entry)
        let sorted = String(decoding: try entry.encoded(), as: UTF8.self)
        let unknown = sorted.replacingOccurrences(of: #"{"dependencies""#, with: #"{"comment":{"a":[1]},"dependencies""#)
        #expect(unknown != sorted)
        #expect(try CacheEntry.decode(Data(unknown.utf8)) == entry)
    }

    /// What is not an entry is an error, never a guess: a missing or
    /// mistyped key, a key twice, a fraction, a mode past 32 bits, not JSON.
    @Test(arguments: [
        #"{"version":1}"#, #"{"version":1.5,"node":"n","roots":[],"files":[],"outputs":[],"values":[],"dependencies":[]}"#,
        #"{"version":1,"node":"n","roots":[],"files":[],"outputs":[],"values":[]}"#, "[", "", "null",
        #"{"version":1,"node":"n","node":"m","roots":[],"files":[],"outputs":[],"values":[],"dependencies":[]}"#,
        #"{"version":1,"node":"n","roots":["out"],"files":[{"path":"out","kind":"directory","mode":4294967296}],"outputs":[],"values":[],"dependencies":[]}"#,
        #"{"version":1,"node":"n","roots":["out"],"files":[{"path":"out","kind":"fifo"}],"outputs":[],"values":[],"dependencies":[]}"#,
        #"{"version":1,"node":"n","roots":[],"files":[],"outputs":[["k"],"v"],"values":[],"dependencies":[]}"#,
        #"{"version":1,"node":7,"roots":[],"files":[],"outputs":[],"values":[],"dependencies":[]}"#,
    ])
    func whatIsNotAnEntryIsRefused(text: String) {
        #expect(throws: CacheError.self) { try CacheEntry.decode(Data(text.utf8)) }
    }

    @Test(arguments: [
        ["../etc/passwd"], ["/etc/passwd"], ["out/../../x"], ["out/./x"], ["out//x"], ["elsewhere/x"], ["out/"], ["out/.."],
        ["outside/x"], [""],
    ])
    func pathsOutsideTheTreeAreRefused(paths: [String]) throws {
        let entry = Self.entry(paths.map { .init(path: $0, kind: .file, mode: 0o644, hash: Self.hash, size: 1) })
        #expect(throws: CacheError.self) { try CacheEntry.decode(try entry.encoded()) }
    }

    @Test func writingThroughARestoredLinkIsRefused() throws {
        let entry = Self.entry([.init(path: "out", kind: .symlink, target: "/etc"),
                                .init(path: "out/passwd", kind: .file, mode: 0o644, hash: Self.hash, size: 1)])
        #expect(throws: CacheError.self) { try CacheEntry.decode(try entry.encoded()) }
    }

    @Test func aBadHashIsRefused() throws {
        let entry = Self.entry([.init(path: "out", kind: .file, mode: 0o644, hash: "../x", size: 1)])
        #expect(throws: CacheError.self) { try CacheEntry.decode(try entry.encoded()) }
    }
}
