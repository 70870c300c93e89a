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

    /// The fast reader reads what `encoded` writes exactly as JSONDecoder
    /// does (escapes, a depfile's dependencies, every kind of file).
    @Test func theFastReaderAgreesWithJSONDecoder() throws {
        var entry = CacheEntry(node: "say \"hi\"\t/x", roots: ["out"],
                               files: [.init(path: "out", kind: .directory, mode: 0o755),
                                       .init(path: "out/a b", kind: .file, mode: 0o4755, hash: Self.hash, size: 1 << 40),
                                       .init(path: "out/l", kind: .symlink, target: "../a\\b")],
                               outputs: [("k", "line\nnext"), ("empty", "")], values: ["\u{1}", "é"],
                               dependencies: [.init(path: "include/h.h", hash: Self.hash)])
        let data = try entry.encoded()
        let slow = try JSONDecoder().decode(CacheEntry.self, from: data)
        #expect(try CacheEntry.decode(data) == slow)
        // Non-ASCII goes to JSONDecoder; plain ASCII takes the fast path.
        #expect(EntryReader.read([UInt8](data)) == nil)
        entry.values = ["\u{1}"]
        let ascii = try entry.encoded()
        #expect(EntryReader.read([UInt8](ascii)) == (try JSONDecoder().decode(CacheEntry.self, from: ascii)))
        // What JSONDecoder refuses, the reader does not accept either.
        for bad in [#"{"version":1}"#, #"{"version":1.5,"node":"n","roots":[],"files":[],"outputs":[],"values":[]}"#,
                    #"{"version":1,"node":"n","roots":[],"files":[],"outputs":[],"values":[]}"#, "[", "",
                    #"{"version":1,"node":"n","node":"m","roots":[],"files":[],"outputs":[],"values":[],"dependencies":[]}"#] {
            #expect(EntryReader.read(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    /// The fast reader takes the entry's keys in any order and spacing; a
    /// key it does not know sends the entry to JSONDecoder, which decides.
    @Test func theFastReaderTakesAnyOrderAndLeavesTheUnknownToJSONDecoder() throws {
        let entry = Self.entry([.init(path: "out", kind: .directory, mode: 0o755),
                                .init(path: "out/a", kind: .file, mode: 0o644, hash: Self.hash, size: 3)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted]
        let pretty = try encoder.encode(entry)
        #expect(EntryReader.read([UInt8](pretty)) == entry)
        let sorted = String(decoding: try entry.encoded(), as: UTF8.self)
        let unknown = sorted.replacingOccurrences(of: #"{"dependencies""#, with: #"{"comment":{"a":[1]},"dependencies""#)
        #expect(unknown != sorted)
        #expect(EntryReader.read(Array(unknown.utf8)) == nil)
        #expect(try CacheEntry.decode(Data(unknown.utf8)) == entry)
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

    @Test(arguments: [("5G", Int64(5) << 30), ("500M", Int64(500) << 20), ("64K", Int64(64) << 10), ("0", 0), ("1.5G", Int64(3) << 29)])
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test func notSizes() {
        for text in ["", "lots", "-1G", "5Q"] { #expect(ByteSize.parse(text) == nil, "\(text)") }
    }
}
