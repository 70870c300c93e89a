import Foundation
import MoonEvents
import Testing

/// The output cache through the real binary: a node whose fingerprint has
/// an entry is restored, not run (A → B → A), trees come back with their
/// links and modes, a damaged blob is a miss, nothing half-restored, and
/// `moon cache stats|prune`.
@Suite struct CacheTests {
    static let graph = """
        version: 1
        nodes:
          build:
            sources: [src.txt]
            generates: [out/result.txt]
            run: |
              mkdir -p out
              tr a-z A-Z < src.txt > out/result.txt
              echo ran >> ran.log
              echo "len=$(wc -c < src.txt | tr -d ' ')" >> "$MOON_OUTPUT"
          use:
            needs: build
            run: echo "got ${{ needs.build.outputs.len }}"
        """

    static func runs(_ moon: Moon) -> Int {
        (moon.read("ran.log") ?? "").split(separator: "\n").count
    }

    /// A → B → A: the third run restores A's outputs and values instead of running.
    @Test func switchingBackRestoresTheFirstOutputs() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("src.txt", "alpha\n")
        #expect(try moon.run(["run", "--json"]).outcome("build") == "ran")
        try moon.write("src.txt", "beta-beta\n")
        #expect(try moon.run(["run", "--json"]).outcome("build") == "ran")
        try moon.write("src.txt", "alpha\n")
        let third = try moon.run(["run", "--json"])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.outcome("build") == "cache-hit")
        let skip = third.events("skip", node: "build").first
        #expect(skip?.restored == CacheRestore(files: 1, bytes: 6))
        #expect(Self.runs(moon) == 2)
        #expect(moon.read("out/result.txt") == "ALPHA\n")
        // Its value reached the dependent.
        let said = third.events("next", node: "use").compactMap { $0.text }
        #expect(said == ["got 6"])
        // Restored is remembered as a success: the next run is a no-op.
        let fourth = try moon.run(["run", "--json"])
        #expect(fourth.outcome("build") == "up-to-date")
        #expect(Self.runs(moon) == 2)
    }

    /// A deleted output is restored, and the summary counts it.
    @Test func aDeletedOutputIsRestoredAndCounted() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("src.txt", "alpha\n")
        try moon.run(["run"])
        try FileManager.default.removeItem(atPath: moon.path("out"))
        let again = try moon.run(["run"])
        #expect(again.status == 0)
        #expect(Self.runs(moon) == 1)
        #expect(moon.read("out/result.txt") == "ALPHA\n")
        #expect(again.stdout.contains("build restored from the cache (1 file, 6 B)"), "\(again.stdout)")
        #expect(again.stdout.contains("moon: ok - 1 succeeded, 1 restored from the cache (6 B) in "), "\(again.stdout)")
    }

    /// Instances of one template whose sources and script text are the
    /// same differ only by their item: each restores its own outputs,
    /// never another instance's.
    @Test func eachInstanceRestoresItsOwnOutputs() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                for-each: [a, b]
                sources: [src.txt]
                generates: ["out-${{ item }}.txt"]
                run: echo "${{ item }}" > "out-${{ item }}.txt"
            """)
        try moon.write("src.txt", "one\n")
        try moon.run(["run"])
        try FileManager.default.removeItem(atPath: moon.path("out-a.txt"))
        try FileManager.default.removeItem(atPath: moon.path("out-b.txt"))
        let again = try moon.run(["run", "--json"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.outcome("gen[a]") == "cache-hit", "\(again.stdout)")
        #expect(again.outcome("gen[b]") == "cache-hit", "\(again.stdout)")
        #expect(moon.read("out-a.txt") == "a\n")
        #expect(moon.read("out-b.txt") == "b\n")
    }

    /// A restored file is built unnamed and linked into place where nothing
    /// is (a fresh checkout); what is there (here a link to a file
    /// elsewhere) is replaced, never written through. Either way it has its
    /// mode and no temporary name is left.
    @Test func aRestoredFileIsLinkedIntoPlaceOrReplacesWhatIsThere() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                sources: [in.txt]
                generates: [out/o.txt]
                run: mkdir -p out && cp in.txt out/o.txt && chmod 750 out/o.txt
            """)
        let fm = FileManager.default
        func mode() throws -> Int? { try fm.attributesOfItem(atPath: moon.path("out/o.txt"))[.posixPermissions] as? Int }
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("in.txt", "two\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("victim.txt", "victim\n")
        try fm.removeItem(atPath: moon.path("out/o.txt"))
        try fm.createSymbolicLink(atPath: moon.path("out/o.txt"), withDestinationPath: moon.path("victim.txt"))
        try moon.write("in.txt", "one\n")
        let over = try moon.run(["run", "--json"])
        #expect(over.outcome("gen") == "cache-hit", "\(over.stderr)")
        #expect(moon.read("out/o.txt") == "one\n" && moon.read("victim.txt") == "victim\n")
        #expect((try fm.attributesOfItem(atPath: moon.path("out/o.txt"))[.type] as? FileAttributeType) == .typeRegular)
        #expect(try mode() == 0o750)
        try fm.removeItem(atPath: moon.path("out/o.txt"))
        try moon.write("in.txt", "two\n")
        let fresh = try moon.run(["run", "--json"])
        #expect(fresh.outcome("gen") == "cache-hit", "\(fresh.stderr)")
        #expect(moon.read("out/o.txt") == "two\n")
        #expect(try mode() == 0o750)
        #expect(try fm.contentsOfDirectory(atPath: moon.path("out")) == ["o.txt"])
    }

    /// A directory output comes back whole: an executable keeps its mode,
    /// a symbolic link stays a link, an empty directory exists, and what
    /// the command had not written (a stale file) is gone.
    @Test func aRestoredTreeKeepsLinksModesAndNothingElse() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              dist:
                sources: [src.txt]
                generates: [dist]
                run: |
                  rm -rf dist && mkdir -p dist/bin dist/empty dist/lib
                  cp src.txt dist/lib/data.txt
                  printf '#!/bin/sh\\necho tool\\n' > dist/bin/tool && chmod 755 dist/bin/tool
                  chmod 600 dist/lib/data.txt
                  ln -s bin/tool dist/latest
                  echo ran >> ran.log
            """)
        try moon.write("src.txt", "one\n")
        try moon.run(["run"])
        try moon.write("src.txt", "two\n")
        try moon.run(["run"])
        try "stale".write(toFile: moon.path("dist/stale.txt"), atomically: true, encoding: .utf8)
        try moon.write("src.txt", "one\n")
        let third = try moon.run(["run", "--json"])
        #expect(third.outcome("dist") == "cache-hit")
        #expect(Self.runs(moon) == 2)
        let fm = FileManager.default
        #expect(moon.read("dist/lib/data.txt") == "one\n")
        #expect(try fm.destinationOfSymbolicLink(atPath: moon.path("dist/latest")) == "bin/tool")
        let tool = try fm.attributesOfItem(atPath: moon.path("dist/bin/tool"))
        #expect((tool[.posixPermissions] as? Int) == 0o755)
        let data = try fm.attributesOfItem(atPath: moon.path("dist/lib/data.txt"))
        #expect((data[.posixPermissions] as? Int) == 0o600)
        #expect(fm.fileExists(atPath: moon.path("dist/empty")))
        #expect(!fm.fileExists(atPath: moon.path("dist/stale.txt")))
        let ran = try shell("./dist/latest", in: moon)
        #expect(ran.stdout == "tool\n")
        // No temporary restore directory is left beside it.
        let left = try fm.contentsOfDirectory(atPath: moon.directory.path).filter { $0.hasPrefix(".moon-restore") }
        #expect(left.isEmpty)
    }

    /// `cache: false`, nodes without `generates`, and `--no-cache` never restore.
    @Test func optedOutNodesAlwaysRun() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              off:
                sources: [src.txt]
                generates: [off.txt]
                cache: false
                run: cp src.txt off.txt && echo off >> ran.log
              on:
                sources: [src.txt]
                generates: [on.txt]
                run: cp src.txt on.txt && echo on >> ran.log
            """)
        try moon.write("src.txt", "x\n")
        try moon.run(["run"])
        try FileManager.default.removeItem(atPath: moon.path("off.txt"))
        try FileManager.default.removeItem(atPath: moon.path("on.txt"))
        let second = try moon.run(["run", "--json"])
        #expect(second.outcome("off") == "ran")
        #expect(second.outcome("on") == "cache-hit")
        try FileManager.default.removeItem(atPath: moon.path("on.txt"))
        let third = try moon.run(["run", "--json", "--no-cache"])
        #expect(third.outcome("on") == "ran")
    }

    /// A blob damaged on disk is a miss with a warning: the node runs, its
    /// output is right, and the cache heals.
    @Test func aDamagedBlobIsAMissNeverAWrongOutput() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("src.txt", "alpha\n")
        try moon.run(["run"])
        let blobs = try #require(FileManager.default.enumerator(atPath: moon.path(".cache/v1/cas")))
            .compactMap { $0 as? String }.filter { $0.count > 3 }
        #expect(blobs.count == 1)
        for blob in blobs {
            let path = moon.path(".cache/v1/cas/" + blob)
            chmod(path, 0o644)
            try "EVIL\n!".write(toFile: path, atomically: false, encoding: .utf8)
        }
        try FileManager.default.removeItem(atPath: moon.path("out"))
        let second = try moon.run(["run", "--json"])
        #expect(second.status == 0)
        #expect(second.outcome("build") == "ran")
        #expect(second.stderr.contains("does not match its hash"), "\(second.stderr)")
        #expect(moon.read("out/result.txt") == "ALPHA\n")
        try FileManager.default.removeItem(atPath: moon.path("out"))
        #expect(try moon.run(["run", "--json"]).outcome("build") == "cache-hit")
        #expect(moon.read("out/result.txt") == "ALPHA\n")
    }

    /// `moon cache stats` counts what is there; `prune --max-size 0` empties it.
    @Test func statsAndPrune() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("src.txt", "alpha\n")
        try moon.run(["run"])
        try moon.write("src.txt", "beta\n")
        try moon.run(["run"])
        let stats = try moon.run(["cache", "stats"])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("entries: 2"), "\(stats.stdout)")
        #expect(stats.stdout.contains("blobs: 2"), "\(stats.stdout)")
        // Sizes in binary units with IEC names, dates in the one human form.
        #expect(stats.stdout.range(of: #"size: [0-9.]+ (B|KiB) \(limit 5 GiB after a run\)"#, options: .regularExpression) != nil, "\(stats.stdout)")
        let date = #"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"#
        #expect(stats.stdout.range(of: "used: \(date) \\.\\. \(date)\n", options: .regularExpression) != nil, "\(stats.stdout)")
        let pruned = try moon.run(["cache", "prune", "--max-size", "0"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.contains("removed 2 entries and 2 blobs"), "\(pruned.stdout)")
        #expect(try moon.run(["cache", "stats"]).stdout.contains("entries: 0"))
        let bad = try moon.run(["cache", "prune", "--max-size", "lots"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("not a size"))
    }

    /// Two checkouts of one project share a cache: the second restores
    /// everything. Two moon processes storing the same entries at once
    /// both succeed, and the entries they leave are whole.
    @Test func twoCheckoutsShareOneCache() throws {
        let cache = try Moon()
        let first = try Moon(graph: Self.graph)
        let second = try Moon(graph: Self.graph)
        let third = try Moon(graph: Self.graph)
        for moon in [first, second, third] { try moon.write("src.txt", "alpha\n") }
        let environment = ["MOON_CACHE_DIR": cache.path("shared")]
        let a = try first.start(["run"], environment: environment)
        let b = try second.start(["run"], environment: environment)
        #expect(try a.wait().status == 0)
        #expect(try b.wait().status == 0)
        let restored = try third.run(["run", "--json"], environment: environment)
        #expect(restored.outcome("build") == "cache-hit")
        #expect(Self.runs(third) == 0)
        #expect(third.read("out/result.txt") == "ALPHA\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: cache.path("shared/v1/tmp"))
        #expect(left.isEmpty)
    }

    /// `--resume` after a failure at the last node reruns only that node:
    /// the nodes without sources that succeeded keep their recorded values.
    @Test func resumeRerunsOnlyWhatDidNotSucceed() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fetch:
                run: echo fetch >> ran.log && echo url=x1 >> "$MOON_OUTPUT"
              prep:
                needs: fetch
                run: echo prep >> ran.log && echo "v=${{ needs.fetch.outputs.url }}-p" >> "$MOON_OUTPUT"
              last:
                needs: prep
                run: echo last >> ran.log && test -f ok && echo "final ${{ needs.prep.outputs.v }}"
            """)
        let failed = try moon.run(["run"])
        #expect(failed.status == 1)
        #expect(moon.read("ran.log") == "fetch\nprep\nlast\n")
        try moon.write("ok", "")
        let resumed = try moon.run(["run", "--resume", "--json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.outcome("fetch") == "resumed")
        #expect(resumed.outcome("prep") == "resumed")
        #expect(resumed.outcome("last") == "ran")
        #expect(resumed.events("next", node: "last").compactMap { $0.text } == ["final x1-p"])
        #expect(moon.read("ran.log") == "fetch\nprep\nlast\nlast\n")
        // Without --resume everything without sources runs again.
        #expect(try moon.run(["run", "--json"]).outcome("fetch") == "ran")
    }

    /// A node whose need ran again is not resumed: its inputs may differ.
    @Test func resumeRerunsWhatFollowsARerunNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              first:
                run: echo first >> ran.log && test -f ok
              second:
                needs: first
                if: always
                run: echo second >> ran.log
            """)
        #expect(try moon.run(["run"]).status == 1)
        try moon.write("ok", "")
        let resumed = try moon.run(["run", "--resume", "--json"])
        #expect(resumed.status == 0)
        #expect(resumed.outcome("first") == "ran")
        #expect(resumed.outcome("second") == "ran")
    }

    /// `moon status` and `moon run -n` in a second checkout say which
    /// nodes a run would restore from the cache, and the run does so.
    @Test func statusAndDryRunSayWhatTheCacheRestores() throws {
        let cache = try Moon()
        let first = try Moon(graph: Self.graph)
        let second = try Moon(graph: Self.graph)
        for moon in [first, second] { try moon.write("src.txt", "alpha\n") }
        let environment = ["MOON_CACHE_DIR": cache.path("shared")]
        #expect(try first.run(["run"], environment: environment).status == 0)
        let status = try second.run(["status"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("build  runs: ") && $0.hasSuffix("; restored from the cache instead") }, "\(status.stdout)")
        #expect(lines.contains { $0.hasPrefix("use") && $0.contains("runs") }, "\(status.stdout)")
        let dry = try second.run(["run", "-n"], environment: environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("1 from cache"), "\(dry.stdout)")
        #expect(dry.stdout.split(separator: "\n").contains { $0.contains("build") && $0.contains("from cache") }, "\(dry.stdout)")
        // Nothing was restored by looking.
        #expect(second.read("out/result.txt") == nil)
        #expect(try second.run(["run", "--json"], environment: environment).outcome("build") == "cache-hit")
        // A changed source: the entry no longer fits.
        try second.write("src.txt", "gamma\n")
        let changed = try second.run(["status"], environment: environment)
        #expect(!changed.stdout.contains("restored from the cache"), "\(changed.stdout)")
        // Without the cache, nothing is said of it.
        let none = try first.run(["run", "-n", "--no-cache"], environment: environment)
        #expect(!none.stdout.contains("from cache"), "\(none.stdout)")
    }

    /// `moon cache stats|prune` use the graph file's `cache: { dir }`, as
    /// `moon run` of that file does; `--cache-dir` still wins.
    @Test func cacheCommandsUseTheGraphFilesCacheDirectory() throws {
        let moon = try Moon(graph: "cache: { dir: project-cache }\n" + Self.graph)
        try moon.write("src.txt", "alpha\n")
        // Not the user's cache, should the file's directory be ignored.
        let unset = ["MOON_CACHE_DIR": "", "XDG_CACHE_HOME": moon.path("xdg")]
        #expect(try moon.run(["run"], environment: unset).status == 0)
        let stats = try moon.run(["cache", "stats"], environment: unset)
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("project-cache"), "\(stats.stdout)")
        #expect(stats.stdout.contains("entries: 1"), "\(stats.stdout)")
        let explicit = try moon.run(["cache", "stats", "moon.yaml"], environment: unset)
        #expect(explicit.stdout.contains("entries: 1"), "\(explicit.stdout)")
        let other = try moon.run(["cache", "stats", "--cache-dir", moon.path("elsewhere")], environment: unset)
        #expect(other.stdout.contains("entries: 0"), "\(other.stdout)")
        let pruned = try moon.run(["cache", "prune", "--max-size", "0"], environment: unset)
        #expect(pruned.stdout.contains("removed 1 entries"), "\(pruned.stdout)")
        #expect(try moon.run(["cache", "stats"], environment: unset).stdout.contains("entries: 0"))
    }
}

