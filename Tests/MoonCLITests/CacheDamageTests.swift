import Foundation
import Testing

/// A damaged local cache never traps moon, hangs it or makes it read
/// without end: an entry or blob that is not a regular file (a FIFO, a link
/// to a device), an entry past the size cap, or a blob whose size is not
/// the entry's is a miss with a warning, and the node runs. A restore or a
/// store that reads a large file stops at Ctrl-C. The large files are
/// sparse: no test writes gigabytes to the disk.
@Suite struct CacheDamageTests {
    static let graph = """
        version: 1
        nodes:
          gen:
            sources: [s.txt]
            generates: [o.txt]
            run: cp s.txt o.txt
        """

    /// A checkout whose cache holds `gen`'s entry, with `o.txt` removed.
    func filled() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.write("s.txt", "source\n")
        #expect(try moon.run(["run"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("o.txt"))
        return moon
    }

    static func entry(_ moon: Moon) throws -> String {
        try CacheEntryCheckTests.entryFile(in: moon.path(".cache/v1/ac"))
    }

    static func blob(_ moon: Moon) throws -> String {
        let cas = moon.path(".cache/v1/cas")
        let shards = try FileManager.default.contentsOfDirectory(atPath: cas)
        let blobs = try shards.flatMap { shard in try FileManager.default.contentsOfDirectory(atPath: cas + "/" + shard).map { cas + "/" + shard + "/" + $0 } }
        #expect(blobs.count == 1, "\(blobs)")
        return try #require(blobs.first)
    }

    /// How a test damages the cache file at the path it is given.
    enum Damage: String, CaseIterable, CustomStringConvertible {
        case fifoEntry, fifoBlob, blobLinkToDevZero, hugeSparseBlob, hugeSparseEntry
        var description: String { rawValue }
        var onEntry: Bool { self == .fifoEntry || self == .hugeSparseEntry }
        var script: String {
            switch self {
            case .fifoEntry, .fifoBlob: return "rm -f \"$F\" && mkfifo \"$F\""
            case .blobLinkToDevZero: return "rm -f \"$F\" && ln -s /dev/zero \"$F\""
            case .hugeSparseBlob, .hugeSparseEntry: return "truncate -s 1T \"$F\""
            }
        }
        /// What the warning says.
        var words: String {
            switch self {
            case .fifoEntry, .fifoBlob, .blobLinkToDevZero: return "not a regular file"
            case .hugeSparseBlob: return "size"
            case .hugeSparseEntry: return "larger than"
            }
        }
    }

    /// Each damaged shape: `moon status` and `moon run` finish promptly,
    /// the node runs, and a warning names the problem.
    @Test(arguments: Damage.allCases)
    func aDamagedCacheFileIsAMissWithAWarning(damage: Damage) throws {
        let moon = try filled()
        let file = try damage.onEntry ? Self.entry(moon) : Self.blob(moon)
        #expect(try shell(damage.script, in: moon, environment: ["F": file]).status == 0)
        // (`moon status` reads entries, not blobs: it forecasts from an entry it can read.)
        let status = try moon.run(["status"], limit: 30)
        #expect(status.status == 0, "\(status.stderr)")
        if damage.onEntry { #expect(!status.stdout.contains("restored from the cache"), "\(status.stdout)") }
        let result = try moon.run(["run", "--json"], limit: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("gen") == "ran", "\(result.stderr)")
        #expect(moon.read("o.txt") == "source\n")
        #expect(result.stderr.contains("node 'gen'") && result.stderr.contains(damage.words), "\(result.stderr)")
        // Stored again, whole: the next run without the output restores it.
        try FileManager.default.removeItem(atPath: moon.path("o.txt"))
        let again = try moon.run(["run", "--json"], limit: 30)
        #expect(again.outcome("gen") == "cache-hit", "\(again.stderr)")
        #expect(moon.read("o.txt") == "source\n")
    }

    /// Disk blocks under `path` in KiB (`du -sk`).
    static func diskUse(_ path: String, in moon: Moon) throws -> Int {
        let out = try shell("du -sk \"\(path)\" | cut -f1", in: moon).stdout
        return Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? Int.max
    }

    /// Ctrl-C while a huge blob (sparse, and named by its entry with its
    /// size) is read for a restore ends moon promptly, interrupted, with no
    /// half-restored output and no disk filled.
    @Test func ctrlCDuringASlowRestoreEndsMoon() throws {
        let moon = try filled()
        let blob = try Self.blob(moon)
        #expect(try shell("truncate -s 1T \"\(blob)\"", in: moon).status == 0)
        try CacheEntryCheckTests.edit(try Self.entry(moon)) { json in
            json["files"] = (json["files"] as? [[String: Any]] ?? []).map { var f = $0; f["size"] = 1 << 40; return f }
        }
        let running = try moon.start(["run"])
        // Restoring: moon has the blob open (the output is built unnamed, with no name to look for).
        let blobPath = URL(fileURLWithPath: blob).resolvingSymlinksInPath().path
        let restoring = eventually(30) {
            let fds = "/proc/\(running.pid)/fd"
            return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == blobPath
            }
        }
        #expect(restoring, "no restore started")
        running.signal(SIGINT)
        let result = try running.wait(limit: 20)
        #expect(result.status == 130, "\(result.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: moon.directory.path)
        #expect(!left.contains { $0.hasPrefix(".moon-restore-") } && !left.contains("o.txt"), "\(left)")
        #expect(try Self.diskUse(moon.directory.path, in: moon) < 64 * 1024)
    }
}

/// Storing a node's outputs in the local cache: an output larger than the
/// cache's size limit is not stored (a warning says so), a sparse one stays
/// sparse, and Ctrl-C during a store ends moon promptly with the partial
/// blob removed. The outputs are sparse files: no disk is filled.
@Suite struct CacheLargeOutputTests {
    static func graph(_ size: String) -> String {
        """
        version: 1
        nodes:
          big:
            sources: [s.txt]
            generates: [out]
            run: truncate -s \(size) out
        """
    }

    /// A 6 GB (sparse) output, over the default 5 GB limit.
    @Test func anOutputLargerThanTheCacheLimitIsNotStored() throws {
        let moon = try Moon(graph: Self.graph("6G"))
        try moon.write("s.txt", "x\n")
        let result = try moon.run(["run"], limit: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("node 'big' is not stored in the cache") && result.stderr.contains("size limit"), "\(result.stderr)")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/ac"))) ?? []
        #expect(entries.isEmpty, "\(entries)")
        #expect(try CacheDamageTests.diskUse(moon.directory.path, in: moon) < 64 * 1024)
    }

    /// Ctrl-C while a large output is stored: moon ends promptly, exit 130,
    /// nothing half-stored is left.
    @Test func ctrlCDuringAStoreEndsMoon() throws {
        let moon = try Moon(graph: Self.graph("4G"))
        try moon.write("s.txt", "x\n")
        let running = try moon.start(["run"])
        let storing = eventually(60) {
            !((try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/tmp"))) ?? []).isEmpty
        }
        #expect(storing, "no store started")
        running.signal(SIGINT)
        let result = try running.wait(limit: 20)
        #expect(result.status == 130, "\(result.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/tmp"))) ?? []
        #expect(left.isEmpty, "\(left)")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/ac"))) ?? []
        #expect(entries.isEmpty, "\(entries)")
        #expect(try CacheDamageTests.diskUse(moon.directory.path, in: moon) < 64 * 1024)
    }
}

/// A depfile past the size cap is not read after the node (it would be
/// read whole into memory): a warning, and the node runs again next time.
@Suite struct LargeDepfileTests {
    @Test func aHugeDepfileIsAWarningNotARead() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              c:
                sources: [s.txt]
                generates: [out]
                depfile: d.d
                run: truncate -s 4G d.d; touch out
            """)
        try moon.write("s.txt", "x\n")
        let result = try moon.run(["run"], limit: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("its depfile d.d is larger than") && result.stderr.contains("runs again next time"),
                "\(result.stderr)")
    }
}
