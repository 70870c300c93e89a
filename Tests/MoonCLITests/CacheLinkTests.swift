import Foundation
import Testing

/// The cache directory is never followed through a link, whatever level
/// the link sits at, and a restore never writes through one: a link planted
/// in a shared cache (another user) or committed with a repository's
/// `cache: { dir: … }`, or restored by a poisoned entry, must not make
/// `moon cache prune`, `stats`, a run's store, restore or prune read,
/// write or delete anything outside. Names the cache cannot carry (not
/// UTF-8) refuse the store with a warning, never a restore that drops them.
@Suite struct CacheLinkTests {
    static let graph = """
        version: 1
        nodes:
          build:
            sources: [in.txt]
            generates: [out.txt]
            run: cp in.txt out.txt && echo ran >> ran.log
        """

    /// 64 hex digits: a name moon would take for an entry or a blob (of shard `ab`).
    static let entryName = String(repeating: "e", count: 64)
    static let blobName = "ab" + String(repeating: "0", count: 62)

    /// Where a link is planted, and the shell that plants it (`$V`: the victim's directory, `$C`: the cache).
    enum Level: String, CaseIterable, CustomTestStringConvertible {
        case v1, ac, cas, shard, tmp, entry, blob

        var plant: String {
            switch self {
            case .v1: return "rm -rf \"$C/v1\" && ln -s \"$V\" \"$C/v1\""
            case .ac: return "rm -rf \"$C/v1/ac\" && ln -s \"$V\" \"$C/v1/ac\""
            case .cas: return "rm -rf \"$C/v1/cas\" && ln -s \"$V/cas\" \"$C/v1/cas\""
            case .shard: return "mkdir -p \"$C/v1/cas\" && rm -rf \"$C/v1/cas/ab\" && ln -s \"$V\" \"$C/v1/cas/ab\""
            case .tmp: return "rm -rf \"$C/v1/tmp\" && ln -s \"$V\" \"$C/v1/tmp\""
            case .entry: return "ln -s \"$V/\(CacheLinkTests.entryName)\" \"$C/v1/ac/\(CacheLinkTests.entryName)\""
            case .blob: return "mkdir -p \"$C/v1/cas/ab\" && ln -s \"$V/\(CacheLinkTests.blobName)\" \"$C/v1/cas/ab/\(CacheLinkTests.blobName)\""
            }
        }

        /// Whether the link stands for a directory of the cache's own layout
        /// (the cache is refused, with a message) rather than a shard or a file in it (skipped).
        var isDirectory: Bool { self != .entry && self != .blob && self != .shard }

        var testDescription: String { rawValue }
    }

    /// A victim directory beside the checkout whose files have every name
    /// the cache uses (entries, blobs, the `ac`/`cas`/`tmp` layout), old
    /// enough for any prune; and what it holds, to compare after.
    static func victim(_ moon: Moon) throws -> String {
        let script = """
            V=victim; mkdir -p $V/ac $V/cas/ab $V/tmp
            for f in $V/\(entryName) $V/\(blobName) $V/ac/\(entryName) $V/cas/ab/\(blobName) $V/tmp/x $V/id_ed25519; do echo "precious $f" > "$f"; done
            touch -d '3 hours ago' $(find $V -type f)
            """
        _ = try shell(script, in: moon)
        return try listing(moon)
    }

    static func listing(_ moon: Moon) throws -> String {
        try shell("find victim | sort | while read -r f; do echo \"$f\"; [ -f \"$f\" ] && cat \"$f\"; done; true", in: moon).stdout
    }

    @Test(arguments: Level.allCases)
    func noCacheOperationFollowsALinkInTheCache(_ level: Level) throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        let before = try Self.victim(moon)
        let cache = moon.path(".cache")
        let planted = try shell(level.plant, in: moon, environment: ["V": moon.path("victim"), "C": cache])
        #expect(planted.status == 0, "\(planted.stderr)")

        let prune = try moon.run(["cache", "prune", "--max-size", "0"])
        let stats = try moon.run(["cache", "stats"])
        if level.isDirectory {
            #expect(prune.status != 0 && prune.stderr.contains("symbolic link"), "\(prune.stderr)")
            #expect(stats.status != 0 && stats.stderr.contains("symbolic link"), "\(stats.stderr)")
        } else {
            #expect(prune.status == 0, "\(prune.stderr)")
            #expect(stats.status == 0, "\(stats.stderr)")
        }
        // A run that stores (a new input), then one that restores (the output removed).
        try moon.write("in.txt", "two\n")
        let store = try moon.run(["run"])
        #expect(store.status == 0, "\(store.stderr)")
        if level.isDirectory { #expect(store.stderr.contains("symbolic link") && store.stderr.contains("running without the cache"), "\(store.stderr)") }
        try FileManager.default.removeItem(atPath: moon.path("out.txt"))
        let restore = try moon.run(["run"])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(moon.read("out.txt") == "two\n")
        #expect(try Self.listing(moon) == before)
    }

    // Only root can give the cache directory away; as another user the test shows as skipped.
    @Test(.enabled(if: geteuid() == 0, "needs root, to give a directory to another user"))
    func aCacheDirectoryOfAnotherUserIsNotUsed() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        #expect(chown(moon.path(".cache/v1/ac"), 65534, 65534) == 0)
        try FileManager.default.removeItem(atPath: moon.path("out.txt"))
        let run = try moon.run(["run"])
        #expect(run.status == 0)
        #expect(run.stderr.contains("belongs to user 65534") && run.stderr.contains("running without the cache"), "\(run.stderr)")
        #expect(moon.read("ran.log") == "ran\nran\n")
        let prune = try moon.run(["cache", "prune", "--max-size", "0"])
        #expect(prune.status != 0 && prune.stderr.contains("belongs to user 65534"), "\(prune.stderr)")
    }

    /// A repository's `cache: { dir: .mooncache }` with a committed link in it: `moon cache prune` deletes nothing outside.
    @Test func aLinkCommittedInARepositorysCacheIsNotFollowed() throws {
        let moon = try Moon(graph: """
            version: 1
            cache: { dir: .mooncache }
            nodes:
              build: { sources: [in.txt], generates: [out.txt], run: cp in.txt out.txt }
            """)
        try moon.write("in.txt", "one\n")
        let before = try Self.victim(moon)
        _ = try shell("mkdir -p .mooncache/v1 && ln -s ../../victim .mooncache/v1/ac", in: moon)
        let environment = ["MOON_CACHE_DIR": ""]
        let run = try moon.run(["run"], environment: environment)
        #expect(run.status == 0 && run.stderr.contains("symbolic link"), "\(run.stderr)")
        let prune = try moon.run(["cache", "prune", "--max-size", "0"], environment: environment)
        #expect(prune.status != 0, "\(prune.stdout)")
        #expect(try Self.listing(moon) == before)
    }

    // MARK: Restores never write through a link

    static let twoEntries = """
        version: 1
        nodes:
          a: { sources: [in.txt], generates: [out], run: mkdir -p out && echo a > out/a.txt }
          b: { needs: a, sources: [in.txt], generates: [out/b.txt], run: echo b > out/b.txt }
        """

    /// Poisons the cache as a hostile cache would: node `a`'s entry restores
    /// `repo/out` as a link to `target`, node `b`'s writes `out/b.txt`.
    static func poison(_ moon: Moon, target: String) throws {
        let script = """
            A=$(grep -l '"node":"a"' .cache/v1/ac/*); B=$(grep -l '"node":"b"' .cache/v1/ac/*)
            printf 'echo PWNED\\n' > blob; H=$(sha256sum blob | cut -c1-64); S=$(stat -c %s blob)
            mkdir -p .cache/v1/cas/${H%${H#??}} && cp blob .cache/v1/cas/${H%${H#??}}/$H && rm blob
            printf '{"dependencies":[],"files":[{"kind":"symlink","path":"out","target":"%s"}],"node":"a","outputs":[],"roots":["out"],"values":[],"version":1}' "$T" > "$A"
            printf '{"dependencies":[],"files":[{"hash":"%s","kind":"file","mode":493,"path":"out/b.txt","size":%s}],"node":"b","outputs":[],"roots":["out/b.txt"],"values":[],"version":1}' $H $S > "$B"
            rm -rf repo/out
            """
        let result = try shell(script, in: moon, environment: ["T": target])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Link targets: absolute, climbing out, and one inside the graph's
    /// directory that is itself a link (committed in the repository) leading out.
    /// The graph is in `repo/`, the victim beside it.
    @Test(arguments: ["absolute", "climbing", "through a committed link"])
    func aPoisonedEntryNeverMakesARestoreWriteOutside(_ kind: String) throws {
        let moon = try Moon()
        for directory in ["repo", "victim"] {
            try moon.makeDirectory(directory)
        }
        try moon.write("repo/moon.yaml", Self.twoEntries)
        try moon.write("repo/in.txt", "in\n")
        #expect(try moon.run(["run"], in: "repo").status == 0)
        switch kind {
        case "absolute": try Self.poison(moon, target: moon.path("victim"))
        case "climbing": try Self.poison(moon, target: "../victim")
        default:
            _ = try shell("ln -s ../victim repo/esc", in: moon)
            try Self.poison(moon, target: "esc")
        }
        let run = try moon.run(["run"], in: "repo")
        #expect(run.status == 0, "\(run.stderr)")
        // (An entry invalid as written is a silent miss; one that leads out through a link on disk, a warning.)
        #expect(kind != "through a committed link" || run.stderr.contains("not restoring node 'a'"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moon.path("victim")).isEmpty)
        #expect(moon.read("repo/out/a.txt") == "a\n")
    }

    /// An earlier restore's link (or any link) in a root's parent: the restore is refused, nothing written through it.
    @Test func aRestoreNeverWritesThroughALinkInItsPath() throws {
        let moon = try Moon()
        for directory in ["repo", "victim"] {
            try moon.makeDirectory(directory)
        }
        try moon.write("repo/moon.yaml", """
            version: 1
            nodes:
              b: { sources: [in.txt], generates: [out/sub/b.txt], run: test -L out/sub || (mkdir -p out/sub && echo b > out/sub/b.txt) }
            """)
        try moon.write("repo/in.txt", "in\n")
        #expect(try moon.run(["run"], in: "repo").status == 0)
        _ = try shell("rm -rf repo/out && mkdir repo/out && ln -s ../../victim repo/out/sub", in: moon)
        let run = try moon.run(["run"], in: "repo")
        #expect(run.stderr.contains("'out/sub' is a symbolic link"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moon.path("victim")).isEmpty)
    }

    @Test func anOutputThatIsALinkLeavingTheGraphIsNotStored() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              l: { sources: [in.txt], generates: [current], run: ln -sfn /tmp current && echo ran >> ran.log }
            """)
        try moon.write("in.txt", "in\n")
        let first = try moon.run(["run"])
        #expect(first.stderr.contains("outside the graph file's directory"), "\(first.stderr)")
        try FileManager.default.removeItem(atPath: moon.path("current"))
        #expect(try moon.run(["run"]).status == 0)
        #expect(moon.read("ran.log") == "ran\nran\n")
    }

    // MARK: Names that are not UTF-8

    /// A file, a directory and a link target whose names are not UTF-8 (Latin-1 bytes).
    @Test(arguments: [
        ("file", "echo x > \"outdir/$(printf 'caf\\351').txt\"", "outdir/caf\\xE9.txt"),
        ("directory", "mkdir -p \"outdir/$(printf '\\377')\" && echo x > \"outdir/$(printf '\\377')/f.txt\"", "outdir/\\xFF"),
        ("link target", "ln -s \"$(printf 'caf\\351')\" outdir/l", "caf\\xE9"),
    ])
    func aNameThatIsNotUTF8RefusesTheStoreNeverDropsTheFile(_ kind: String, _ make: String, _ named: String) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: [outdir]
                run: |
                  mkdir -p outdir && echo ok > outdir/ok.txt
                  \(make)
                  echo ran >> ran.log
            """)
        try moon.write("in.txt", "in\n")
        let first = try moon.run(["run"])
        #expect(first.status == 0)
        #expect(first.stderr.contains("not UTF-8") && first.stderr.contains(named), "\(kind): \(first.stderr)")
        let before = try shell("ls -A outdir | od -c", in: moon).stdout
        try FileManager.default.removeItem(atPath: moon.path("outdir"))
        let second = try moon.run(["run"])
        #expect(second.status == 0)
        #expect(!second.stderr.contains("restored") && !second.stdout.contains("restored"), "\(second.stdout)")
        #expect(moon.read("ran.log") == "ran\nran\n")
        #expect(try shell("ls -A outdir | od -c", in: moon).stdout == before)
    }

    /// A wildcard output matching a name that is not UTF-8 refuses the
    /// store too: the entry would restore the other files without it.
    @Test func aWildcardOutputMatchingANameThatIsNotUTF8RefusesTheStore() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              g:
                sources: [in.txt]
                generates: ["out/*.txt"]
                run: |
                  mkdir -p out && echo ok > out/ok.txt && echo x > "out/$(printf 'caf\\351').txt"
                  echo ran >> ran.log
            """)
        try moon.write("in.txt", "in\n")
        let first = try moon.run(["run"])
        #expect(first.status == 0)
        #expect(first.stderr.contains("out/caf\\xE9.txt") && first.stderr.contains("not UTF-8"), "\(first.stderr)")
        try FileManager.default.removeItem(atPath: moon.path("out"))
        let second = try moon.run(["run"])
        #expect(second.status == 0)
        #expect(!second.stdout.contains("restored"), "\(second.stdout)")
        #expect(moon.read("ran.log") == "ran\nran\n")
    }
}

/// The same poisoning from a remote cache (a real nginx): a fresh checkout
/// with an empty local cache restores nothing outside its graph's directory.
@Suite(.enabled(if: Nginx.binary != nil, "nginx is not installed (make test-deps)"))
struct RemoteCacheLinkTests {
    @Test func aPoisonedRemoteEntryNeverMakesARestoreWriteOutside() throws {
        let server = try Nginx()
        let first = try Moon(graph: CacheLinkTests.twoEntries)
        try first.write("in.txt", "in\n")
        #expect(try first.run(["run", "--remote-cache", server.url]).status == 0)
        let second = try Moon()
        for directory in ["repo", "victim"] {
            try second.makeDirectory(directory)
        }
        try second.write("repo/moon.yaml", CacheLinkTests.twoEntries)
        try second.write("repo/in.txt", "in\n")
        let store = server.directory.path("data/cache")
        let script = """
            A=$(grep -l '"node":"a"' "$S"/ac/*); B=$(grep -l '"node":"b"' "$S"/ac/*)
            printf '#!/bin/sh\\necho PWNED\\n' > blob; H=$(sha256sum blob | cut -c1-64); Z=$(stat -c %s blob)
            cp blob "$S/cas/$H" && rm blob
            printf '{"dependencies":[],"files":[{"kind":"symlink","path":"out","target":"%s"}],"node":"a","outputs":[],"roots":["out"],"values":[],"version":1}' "$T" > "$A"
            printf '{"dependencies":[],"files":[{"hash":"%s","kind":"file","mode":493,"path":"out/b.txt","size":%s}],"node":"b","outputs":[],"roots":["out/b.txt"],"values":[],"version":1}' $H $Z > "$B"
            """
        let poisoned = try shell(script, in: second, environment: ["S": store, "T": second.path("victim")])
        #expect(poisoned.status == 0, "\(poisoned.stderr)")
        let run = try second.run(["run", "--remote-cache", server.url], in: "repo")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: second.path("victim")).isEmpty)
        #expect(second.read("repo/out/a.txt") == "a\n")
    }
}
