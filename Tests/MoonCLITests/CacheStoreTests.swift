import Foundation
import Testing

/// What a store keeps and what a failed store or restore says: an output
/// the command did not create is a warning and no entry (never a restore on
/// every run), a long output name restores, errors name their true cause,
/// and each damaged blob is warned about.
@Suite struct CacheStoreTests {
    /// A `generates` output the command does not create, in its forms.
    static let notCreated: [(generates: String, run: String, output: String)] = [
        ("[a.txt, b.txt]", "echo a > a.txt", "'b.txt'"),
        ("[never.txt]", "true", "'never.txt'"),
        ("[link]", "ln -sf missing link", "'link' (a link to a missing file)"),
        ("[a.txt, \"out/*.o\"]", "echo a > a.txt", "anything matching 'out/*.o'"),
    ]

    /// Each run warns once, naming the node and the output; nothing is
    /// stored, so no run claims a restore.
    @Test(arguments: 0..<notCreated.count)
    func anOutputTheCommandDidNotCreateIsAWarningNotAnEntry(_ index: Int) throws {
        let (generates, run, output) = Self.notCreated[index]
        let moon = try Moon(graph: """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: \(generates)
                run: \(run)
            """)
        try moon.write("in.txt", "x\n")
        for _ in 0..<2 {
            let result = try moon.run(["run", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.outcome("g") == "ran", "\(result.stdout)")
            let warnings = result.stderr.components(separatedBy: "node 'g' did not create").count - 1
            #expect(warnings == 1, "\(result.stderr)")
            #expect(result.stderr.contains(output), "\(result.stderr)")
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/ac"))) ?? []
        #expect(entries.isEmpty)
    }

    /// An output outside the graph's directory, which the cache does not
    /// carry: a warning that says so, and no entry (a restore would leave it stale).
    @Test func anOutputOutsideTheTreeIsAWarningNotAnEntry() throws {
        let moon = try Moon()
        let outside = moon.path("abs.txt")
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: [a.txt, \(outside)]
                run: cp in.txt a.txt && cp in.txt \(outside)
            """)
        try moon.write("in.txt", "x\n")
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("node 'g' is not stored in the cache") && result.stderr.contains("'\(outside)'"), "\(result.stderr)")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/ac"))) ?? []
        #expect(entries.isEmpty)
    }

    /// An output with a 250-byte name is restored: the temporary name
    /// beside it does not lengthen it.
    @Test func anOutputWithALongNameRestores() throws {
        let name = String(repeating: "x", count: 246) + ".txt"
        let moon = try Moon(graph: """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: [\(name)]
                run: cp in.txt \(name)
            """)
        try moon.write("in.txt", "x\n")
        #expect(try moon.run(["run"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path(name))
        let again = try moon.run(["run", "--json"])
        #expect(again.outcome("g") == "cache-hit", "\(again.stderr)")
        #expect(again.stderr.isEmpty, "\(again.stderr)")
        #expect(moon.read(name) == "x\n")
    }

    /// A cache directory that is a file: the warning says so (not
    /// "Permission denied"), and `moon cache stats` and `prune` fail.
    @Test func aCacheDirectoryThatIsAFileIsSaidSo() throws {
        let moon = try Moon(graph: CacheTests.graph)
        try moon.write("src.txt", "alpha\n")
        try moon.write("cache-file", "")
        let environment = ["MOON_CACHE_DIR": moon.path("cache-file")]
        let result = try moon.run(["run"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.lowercased().contains("not a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("Permission denied"), "\(result.stderr)")
        for command in [["cache", "stats"], ["cache", "prune", "--max-size", "0"]] {
            let stats = try moon.run(command, environment: environment)
            #expect(stats.status == 1, "\(command): \(stats.stdout)\(stats.stderr)")
            #expect(stats.stderr.contains("not a directory"), "\(command): \(stats.stderr)")
            #expect(!stats.stdout.contains("entries: 0"), "\(command): \(stats.stdout)")
        }
    }

    /// A restore that meets a file where its output's directory should be
    /// says what is in the way.
    @Test func aFileInTheWayOfARestoreIsSaidSo() throws {
        let moon = try Moon(graph: CacheTests.graph)
        try moon.write("src.txt", "alpha\n")
        #expect(try moon.run(["run"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("out"))
        try moon.write("out", "in the way\n")
        let result = try moon.run(["run", "--json"])
        #expect(result.stderr.contains("cannot restore node 'build'"), "\(result.stderr)")
        #expect(result.stderr.contains("Not a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("Permission denied"), "\(result.stderr)")
    }

    /// Two damaged blobs, two warnings, each naming its blob.
    @Test func eachDamagedBlobIsWarnedAbout() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                sources: [in.txt]
                generates: [a.txt]
                run: (cat in.txt; echo a) > a.txt
              b:
                sources: [in.txt]
                generates: [b.txt]
                run: (cat in.txt; echo b) > b.txt
            """)
        try moon.write("in.txt", "x\n")
        #expect(try moon.run(["run"]).status == 0)
        let blobs = try #require(FileManager.default.enumerator(atPath: moon.path(".cache/v1/cas")))
            .compactMap { $0 as? String }.filter { $0.count > 3 }
        #expect(blobs.count == 2)
        for blob in blobs { try "EVIL\n!".write(toFile: moon.path(".cache/v1/cas/" + blob), atomically: false, encoding: .utf8) }
        try FileManager.default.removeItem(atPath: moon.path("a.txt"))
        try FileManager.default.removeItem(atPath: moon.path("b.txt"))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0)
        #expect(result.stderr.components(separatedBy: "does not match its hash").count - 1 == 2, "\(result.stderr)")
        for blob in blobs { #expect(result.stderr.contains(String(blob.suffix(64))), "\(result.stderr)") }
        #expect(moon.read("a.txt") == "x\na\n" && moon.read("b.txt") == "x\nb\n")
    }

    /// `generates: [sub/../b.txt]` is cached as `b.txt`.
    @Test func aPathWithDotDotInsideTheTreeIsCached() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: [sub/../b.txt]
                run: mkdir -p sub && cp in.txt b.txt
            """)
        try moon.write("in.txt", "x\n")
        #expect(try moon.run(["run"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("b.txt"))
        let again = try moon.run(["run", "--json"])
        #expect(again.outcome("g") == "cache-hit", "\(again.stderr)")
        #expect(moon.read("b.txt") == "x\n")
    }

    /// A FIFO and a socket among the outputs: each node's own warning (the
    /// first does not silence the second), and nothing stored.
    @Test func aSocketOrFIFOOutputIsWarnedAboutPerNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fifo:
                sources: [in.txt]
                generates: [f]
                run: rm -f f && mkfifo f
              socket:
                sources: [in.txt]
                generates: [s]
                run: rm -f s && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('s')"
            """)
        try moon.write("in.txt", "x\n")
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("node 'fifo'") && result.stderr.contains("'f' is a FIFO"), "\(result.stderr)")
        #expect(result.stderr.contains("node 'socket'") && result.stderr.contains("'s' is a socket"), "\(result.stderr)")
    }
}
