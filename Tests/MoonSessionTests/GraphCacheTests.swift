import Foundation
import MoonGraph
import Testing
@testable import MoonSession

/// `GraphCache`: an entry is used only when nothing it was made from
/// changed, and a damaged, foreign or planted entry is a silent miss.
/// Stores are given a load start 3 s after now, so that files just
/// written here are old enough (`GraphCache.racyWindow`) without sleeping.
@Suite(.serialized) struct GraphCacheTests {
    let root: String
    let cache: GraphCache

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("moon-graphcache-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        cache = GraphCache(directory: root + "/cache/graphs")
    }

    static let graph = """
        version: 1
        includes:
          lib: lib.yaml
        dotenv: [.env, { path: .env.local, optional: true }]
        nodes:
          build:
            run: make
            needs: [lib:core]
          obj:
            for-each: { glob: "src/*.c" }
            run: cc ${{ item }}
        """

    static let lib = """
        version: 1
        nodes:
          core:
            run: echo core
        """

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + name))
    }

    private func path(_ name: String) -> String { root + "/" + name }

    private func project() throws {
        try write("moon.yaml", Self.graph)
        try write("lib.yaml", Self.lib)
        try write(".env", "A=1\n")
        try write("src/a.c", "")
    }

    /// A fresh load of the project, stored as `GraphFile.load` stores it.
    @discardableResult
    private func loadAndStore(overrides: [String: String] = [:], started: Int64 = GraphCache.now() + 3_000_000_000) throws -> Graph {
        let reads = GraphCache.Reads()
        let parsed = try GraphFile.parse(path("moon.yaml"), overrides: overrides, reads: reads)
        #expect(parsed.result.diagnostics.isEmpty, "\(parsed.result.diagnostics)")
        let graph = try #require(parsed.result.graph)
        cache.store(graph, included: parsed.result.included.map(\.path), path: path("moon.yaml"), overrides: overrides, discovered: false,
                    reads: reads, started: started)
        return graph
    }

    private func lookup(overrides: [String: String] = [:]) -> Graph? {
        cache.lookup(path("moon.yaml"), overrides: overrides, discovered: false, files: GraphFile.files)?.graph
    }

    private func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cache.directory)) ?? []).filter { !$0.hasPrefix(".") }
    }

    @Test func anUnchangedProjectIsAHitEqualToAFreshLoad() throws {
        try project()
        let fresh = try loadAndStore()
        let hit = try #require(lookup())
        #expect(try BinaryCoding.encode(hit) == BinaryCoding.encode(fresh))
        let files = try #require(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: GraphFile.files))
        #expect(files.included == [path("lib.yaml")])
        #expect(files.globs.map(\.files) == [["src/a.c"]])
        #expect(entries().count == 1)
    }

    /// The key's form writes every stored property of its types.
    @Test func theKeyWritesEveryStoredProperty() throws {
        func labels(_ value: Any) -> [String] { Mirror(reflecting: value).children.compactMap(\.label) }
        let stamp = GraphCache.Stamp(path: "p", exists: false)
        let glob = GraphCache.Glob(directory: ".", pattern: "*", exclude: [], matches: [], unnamable: [])
        let key = GraphCache.Key(build: stamp, executable: stamp, workingDirectory: "/", path: "p", discovered: false, overrides: [:],
                                 files: [], globs: [], included: [])
        #expect(labels(stamp) == GraphCache.Stamp.fields)
        #expect(labels(glob) == GraphCache.Glob.fields)
        #expect(labels(key) == GraphCache.Key.fields)
    }

    /// A file changed within `racyWindow` of the load could later look
    /// unchanged in its timestamps: such a load is not stored.
    @Test func aLoadOfAFileChangedJustBeforeIsNotStored() throws {
        try project()
        try loadAndStore(started: GraphCache.now())
        #expect(lookup() == nil)
        #expect(entries().isEmpty)
    }

    @Test func anyInputChangedIsAMiss() throws {
        try project()
        try loadAndStore()
        #expect(lookup() != nil)
        try write("lib.yaml", Self.lib.replacingOccurrences(of: "echo core", with: "echo CORE"))
        #expect(lookup() == nil, "an include edited")

        try loadAndStore()
        try write(".env", "A=2\n")
        #expect(lookup() == nil, "a dotenv file edited")

        try loadAndStore()
        try write(".env.local", "B=1\n")
        #expect(lookup() == nil, "an optional dotenv file created")

        try loadAndStore()
        #expect(lookup(overrides: ["x": "1"]) == nil, "--set changed")

        try loadAndStore()
        try write("src/b.c", "")
        #expect(lookup() == nil, "a new file in a for-each glob's directory")

        try loadAndStore()
        #expect(lookup() != nil)
    }

    /// `files`, counting the globs it lists.
    private final class CountingAccess: @unchecked Sendable {
        var globs = 0
        var access: GraphFileAccess {
            GraphFileAccess(read: GraphFile.files.read, glob: { [self] directory, pattern, exclude in
                globs += 1
                return GraphFile.files.glob(directory, pattern, exclude)
            })
        }
    }

    /// A for-each glob's directories unchanged: a hit without listing them
    /// again. Any entry made, removed or renamed in one (below a `**` too)
    /// changes its stats, and the glob is listed and compared again.
    @Test func aGlobIsListedAgainOnlyWhenADirectoryItListedChanged() throws {
        try FileManager.default.createDirectory(atPath: path("src/deep"), withIntermediateDirectories: true)
        try write("moon.yaml", """
            version: 1
            nodes:
              obj:
                for-each: { glob: "src/**/*.c" }
                run: cc ${{ item }}
            """)
        try write("src/a.c", "")
        try write("src/deep/b.c", "")
        try loadAndStore()
        let counting = CountingAccess()
        let hit = cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: counting.access)
        #expect(hit?.globs.map(\.files) == [["src/a.c", "src/deep/b.c"]])
        #expect(counting.globs == 0)
        // A file made below: its directory's stats change, and the listing is compared (another file: a miss).
        try write("src/deep/c.c", "")
        #expect(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: counting.access) == nil)
        #expect(counting.globs == 1)
        try loadAndStore()
        // A file renamed within a directory: the same count of entries, another name.
        #expect(rename(path("src/deep/c.c"), path("src/deep/d.c")) == 0)
        #expect(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: counting.access) == nil)
        try loadAndStore()
        // A file that does not match made in a listed directory: listed again, the same files, a hit.
        try write("src/notes.txt", "")
        let before = counting.globs
        #expect(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: counting.access) != nil)
        #expect(counting.globs == before + 1)
    }

    /// A directory changed within `racyWindow` of the load could change
    /// again within the same timestamp tick, and a link's target can change
    /// while its directory does not: such a glob is listed at every use.
    @Test func aRecentlyChangedDirectoryOrALinkIsListedAtEveryUse() throws {
        try project()
        var future = [timespec(tv_sec: time(nil) + 2, tv_nsec: 0), timespec(tv_sec: time(nil) + 2, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path("src"), &future, 0) == 0)
        try loadAndStore()
        let counting = CountingAccess()
        #expect(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: counting.access) != nil)
        #expect(counting.globs == 1)

        try FileManager.default.createDirectory(atPath: path("elsewhere"), withIntermediateDirectories: true)
        try write("elsewhere/x.c", "")
        #expect(symlink(path("elsewhere/x.c"), path("src/x.c")) == 0)
        var past = [timespec(tv_sec: time(nil) - 10, tv_nsec: 0), timespec(tv_sec: time(nil) - 10, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path("src"), &past, 0) == 0)
        try loadAndStore()
        #expect(lookup()?.nodes.map(\.name).contains("obj[src/x.c]") == true)
        // The link's target removed: its directory's stats do not change, the glob no longer matches it.
        try FileManager.default.removeItem(atPath: path("elsewhere/x.c"))
        #expect(lookup() == nil)
    }

    /// Another file renamed over the graph file, with the same size and
    /// mtime: its inode (and ctime) differ.
    @Test func aFileReplacedWithTheSameSizeAndMtimeIsAMiss() throws {
        try project()
        try loadAndStore()
        let replacement = Self.graph.replacingOccurrences(of: "run: make", with: "run: evil")
        #expect(replacement.utf8.count == Self.graph.utf8.count)
        try write("moon.yaml.new", replacement)
        let attributes = try FileManager.default.attributesOfItem(atPath: path("moon.yaml"))
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path("moon.yaml.new"))
        #expect(rename(path("moon.yaml.new"), path("moon.yaml")) == 0)
        #expect(lookup() == nil)
    }

    @Test func aDamagedOrForeignEntryIsASilentMissAndIsReplaced() throws {
        try project()
        try loadAndStore()
        let entry = cache.directory + "/" + entries()[0]
        let good = try Data(contentsOf: URL(fileURLWithPath: entry))
        var damaged: [Data] = [Data(), good.prefix(good.count / 2), good.prefix(good.count - 1), good + Data([0]), Data("moon-graph\0".utf8) + Data([9]) + good.dropFirst(12)]
        var flipped = good
        // The inode of moon's executable, first in the entry's key: an entry of another moon build.
        flipped[12 + 8 + 8 + "/proc/self/exe".utf8.count + 1 + 8] ^= 0xFF
        damaged.append(flipped)
        // The key's length, just after the magic: huge values (2^63 and above, the largest) are a miss, not a trap.
        for length in [UInt64(1) << 63, UInt64.max, UInt64(good.count)] {
            var long = good
            withUnsafeBytes(of: length.littleEndian) { long.replaceSubrange(12..<20, with: $0) }
            damaged.append(long)
        }
        for bytes in damaged {
            try bytes.write(to: URL(fileURLWithPath: entry))
            #expect(lookup() == nil)
        }
        try loadAndStore()
        #expect(lookup() != nil)
    }

    /// An entry someone else could have written is not read: the directory or
    /// the entry writable by others, or owned by another user.
    @Test func aPlantedEntryIsNotRead() throws {
        try project()
        try loadAndStore()
        let entry = cache.directory + "/" + entries()[0]
        chmod(entry, 0o666)
        #expect(lookup() == nil)
        chmod(entry, 0o600)
        #expect(lookup() != nil)
        chmod(cache.directory, 0o777)
        #expect(lookup() == nil)
        chmod(cache.directory, 0o700)
        #expect(lookup() != nil)
        if geteuid() == 0 {
            chown(entry, 65534, 65534)
            #expect(lookup() == nil)
        }
    }

    /// An entry copied from another project (a cloned repository's) does not
    /// match: its key names other files, inodes and ctimes.
    @Test func anEntryCopiedFromAnotherProjectIsAMiss() throws {
        try project()
        try loadAndStore()
        let entry = cache.directory + "/" + entries()[0]
        let other = root + "/other"
        try FileManager.default.createDirectory(atPath: other + "/src", withIntermediateDirectories: true)
        for name in ["moon.yaml", "lib.yaml", ".env", "src/a.c"] {
            try FileManager.default.copyItem(atPath: path(name), toPath: other + "/" + name)
        }
        try FileManager.default.removeItem(atPath: path("moon.yaml"))
        try FileManager.default.moveItem(atPath: other + "/moon.yaml", toPath: path("moon.yaml"))
        #expect(FileManager.default.fileExists(atPath: entry))
        #expect(lookup() == nil)
    }

    /// A graph moon found by searching reads only trusted includes: an
    /// include's directory made writable by others since (which changes no
    /// stat the entry holds) is a miss, and the fresh load says why.
    @Test func aDiscoveredGraphAsksTrustAgain() throws {
        try project()
        let reads = GraphCache.Reads()
        let parsed = try GraphFile.parse(path("moon.yaml"), overrides: [:], reads: reads)
        cache.store(try #require(parsed.result.graph), included: [path("lib.yaml")], path: path("moon.yaml"), overrides: [:],
                    discovered: true, reads: reads, started: GraphCache.now() + 3_000_000_000)
        let lookup = { cache.lookup(path("moon.yaml"), overrides: [:], discovered: true, files: GraphFile.discoveredFiles) }
        #expect(lookup() != nil)
        #expect(cache.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: GraphFile.files) == nil)
        chmod(root, 0o777)
        defer { chmod(root, 0o755) }
        #expect(lookup() == nil)
    }

    /// A cache directory moon cannot make is no error and no output.
    @Test func anUnwritableLocationIsSilent() throws {
        try project()
        try write("blocker", "")
        let blocked = GraphCache(directory: path("blocker/graphs"))
        let reads = GraphCache.Reads()
        let parsed = try GraphFile.parse(path("moon.yaml"), overrides: [:], reads: reads)
        blocked.store(try #require(parsed.result.graph), included: [], path: path("moon.yaml"), overrides: [:], discovered: false, reads: reads,
                      started: GraphCache.now() + 3_000_000_000)
        #expect(blocked.lookup(path("moon.yaml"), overrides: [:], discovered: false, files: GraphFile.files) == nil)
    }

    /// The directory holds at most `maxEntries` entries.
    @Test func theDirectoryIsBounded() throws {
        try project()
        try loadAndStore()
        for i in 0..<(GraphCache.maxEntries + 5) {
            try Data([UInt8(i & 0xFF)]).write(to: URL(fileURLWithPath: cache.directory + "/stale\(i)"))
        }
        try loadAndStore()
        #expect(entries().count <= GraphCache.maxEntries)
        #expect(lookup() != nil)
    }

    // MARK: - Every graph both ways

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `"""` literals of the test sources that are graph files (without interpolation).
    static func inlineGraphs() throws -> [String] {
        var graphs: [String] = []
        for directory in ["Tests/MoonCLITests", "Tests/MoonGraphTests", "Tests/MoonSessionTests"] {
            let folder = repository.appendingPathComponent(directory)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                let parts = text.components(separatedBy: "\"\"\"")
                for (i, part) in parts.enumerated() where i % 2 == 1 {
                    guard part.hasPrefix("\n"), !part.contains("\\("), !part.contains("\\") else { continue }
                    var lines = part.dropFirst().components(separatedBy: "\n")
                    let indent = lines.removeLast().count
                    let body = lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
                    if body.hasPrefix("version: 1") { graphs.append(body + "\n") }
                }
            }
        }
        return graphs
    }

    /// Each graph of examples/ and each graph the tests write, loaded
    /// fresh, comes back from its compiled form as the same bytes (every
    /// stored property of every type, by its synthesized coding).
    @Test func everyGraphComesBackWhole() throws {
        var paths: [String] = []
        let examples = Self.repository.appendingPathComponent("examples").path
        for case let name as String in FileManager.default.enumerator(atPath: examples)! where name.hasSuffix(".yaml") || name.hasSuffix(".yml") {
            paths.append(examples + "/" + name)
        }
        for (i, text) in try Self.inlineGraphs().enumerated() {
            try write("inline\(i).yaml", text)
            paths.append(path("inline\(i).yaml"))
        }
        var compared = 0
        for file in paths {
            guard let graph = try? GraphFile.parse(file).result.graph else { continue }
            let bytes = try BinaryCoding.encode(graph)
            let back = try bytes.withUnsafeBytes { try BinaryCoding.decode(Graph.self, from: $0) }
            #expect(try BinaryCoding.encode(back) == bytes, "\(file)")
            let fast = try GraphBinary.encode(graph).withUnsafeBytes { try GraphBinary.decode($0) }
            #expect(try BinaryCoding.encode(fast) == bytes, "\(file)")
            for node in graph.nodes where !node.isBarrier { #expect(back.index(of: node.name) == graph.index(of: node.name)) }
            compared += 1
        }
        #expect(compared > 100)
    }
}
