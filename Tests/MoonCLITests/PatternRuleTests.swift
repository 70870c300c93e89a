import Foundation
import MoonEvents
import Testing

/// One rule for what a pattern means (docs/incremental.md, "Patterns"):
/// a pattern that matches a directory means every file below it, hidden
/// ones included, except tools' directories (`.git`, `.moon`, …); and a
/// node's own `generates` are not its sources. Sources, generates, the
/// cache and watch mode follow it alike, so a producer → consumer chain
/// through a directory is never stale.
@Suite struct PatternRuleTests {
    /// How the producer fills `data/` from `in.txt`: each is a way a
    /// directory's hidden content changes.
    static let producers: [(shape: String, script: String)] = [
        ("a hidden file", #"mkdir -p data && cp in.txt data/.result"#),
        ("a hidden subdirectory", #"mkdir -p data/.cov && cp in.txt data/.cov/part && echo v > data/visible"#),
        ("a hidden file added below", #"mkdir -p data/sub && echo v > data/visible && cp in.txt "data/sub/.n-$(cat in.txt)""#),
        ("a hidden file removed below",
         #"mkdir -p data/sub && echo v > data/visible && if [ "$(cat in.txt)" = one ]; then echo x > data/sub/.gone; else rm -f data/sub/.gone; fi"#),
    ]

    /// The ways a consumer names that directory: all mean the same files.
    static let consumers = ["data", "data/", "./data", "data/**"]

    @Test(arguments: producers.indices)
    func aChainThroughADirectoryIsNeverStale(_ shape: Int) throws {
        let producer = Self.producers[shape]
        for pattern in Self.consumers {
            let moon = try Moon(graph: """
                version: 1
                nodes:
                  produce:
                    sources: [in.txt]
                    generates: [data]
                    run: '\(producer.script.replacingOccurrences(of: "'", with: "''"))'
                  consume:
                    needs: produce
                    sources: ["\(pattern)"]
                    generates: [out.txt]
                    run: find data -type f | LC_ALL=C sort | while read -r f; do echo "$f = $(cat "$f")"; done > out.txt
                """)
            let label = "\(producer.shape), consumer sources [\(pattern)]"
            try moon.write("in.txt", "one\n")
            let first = try moon.run(["run"])
            #expect(first.status == 0, "\(label): \(first.stderr)")
            try moon.write("in.txt", "two\n")
            let second = try moon.run(["run", "--json"])
            #expect(second.status == 0, "\(label): \(second.stderr)")
            #expect(second.events("skip", node: "consume").isEmpty, "\(label): consume was skipped after data/ changed")
            let now = try shell(#"find data -type f | LC_ALL=C sort | while read -r f; do echo "$f = $(cat "$f")"; done"#, in: moon)
            #expect(moon.read("out.txt") == now.stdout, "\(label): out.txt is stale")
            let status = try moon.run(["status"])
            #expect(status.stdout.components(separatedBy: "up to date").count == 3, "\(label): \(status.stdout)")
        }
    }

    /// A restore from the cache brings back the directory with its hidden
    /// files, as a run made it: what the consumer reads is the same.
    @Test func aRestoredDirectoryHoldsItsHiddenFiles() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              produce:
                sources: [in.txt]
                generates: [data]
                run: mkdir -p data/.cov && cp in.txt data/.cov/part && cp in.txt data/.result
            """)
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("data"))
        let restored = try moon.run(["run"])
        #expect(restored.stdout.contains("restored from the cache"), "\(restored.stdout)")
        #expect(moon.read("data/.cov/part") == "one\n" && moon.read("data/.result") == "one\n")
    }

    /// A directory is stored without its `.git` (a tool's, not the
    /// node's output), and a restore keeps the one that is there: a
    /// `site/.git` worktree for publishing survives a restore of `site`.
    @Test func aRestoreKeepsTheToolDirectoriesItDoesNotCarry() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              site:
                sources: [in.txt]
                generates: [site]
                run: mkdir -p site && cp in.txt site/index.html
            """)
        _ = try shell("mkdir -p site/.git && echo ref > site/.git/HEAD", in: moon)
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("in.txt", "two\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("in.txt", "one\n")
        let back = try moon.run(["run"])
        #expect(back.stdout.contains("restored from the cache"), "\(back.stdout)")
        #expect(moon.read("site/index.html") == "one\n")
        #expect(moon.read("site/.git/HEAD") == "ref\n", "the restore removed site/.git")
        let entries = try shell("cat .cache/v1/ac/*", in: moon)
        #expect(!entries.stdout.contains(".git"), "an entry carries site/.git")
    }

    /// `sources: [.]` (or `**`) takes the whole project but no tool's
    /// directory: `.git` and moon's own `.moon`, which every run writes,
    /// never make the node stale; a hidden file of the project does.
    @Test(arguments: [".", "**", "./"])
    func theWholeProjectIsUpToDateAfterARun(_ pattern: String) throws {
        let moon = try Moon()
        _ = try shell("mkdir -p proj/src proj/.git/objects proj/.hg && echo a > proj/src/a.txt && echo x > proj/.env", in: moon)
        try moon.write("proj/moon.yaml", """
            version: 1
            nodes:
              all:
                sources: ["\(pattern)"]
                run: find . -type f | wc -l; date > .git/objects/written-by-git; date > .hg/dirstate
            """)
        #expect(try moon.run(["run"], in: "proj").status == 0)
        let again = try moon.run(["run", "--json"], in: "proj")
        #expect(again.events("skip", node: "all").first?.reason == .upToDate, "\(again.stdout)")
        try moon.write("proj/.env", "y\n")
        let status = try moon.run(["status"], in: "proj")
        #expect(status.stdout.contains("all  runs: .env changed"), "\(status.stdout)")
    }

    /// A wildcard does not match a leading `.`, as in a shell; a directory
    /// it matches is taken whole. `data/*` reads `data/sub/.x` but not `data/.x`.
    @Test func aWildcardSkipsHiddenNamesButTakesTheDirectoriesItMatchesWhole() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              list:
                sources: ["data/*"]
                run: echo listed
            """)
        _ = try shell("mkdir -p data/sub && echo 1 > data/.top && echo 2 > data/sub/.inner && echo 3 > data/plain", in: moon)
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("data/.top", "changed\n")
        #expect(try moon.run(["status"]).stdout.contains("list  up to date"))
        try moon.write("data/sub/.inner", "changed\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("runs: data/sub/.inner changed"), "\(status.stdout)")
    }

    /// A node whose sources cover its own generates (`docs/**` beside
    /// `docs/_build/html`) is up to date on the second run, and `moon status` agrees.
    @Test(arguments: [(["docs/**"], ["docs/_build/html"]), (["docs"], ["docs/_build"]), (["**/*.txt"], ["out/*.txt"])])
    func aNodesOwnGeneratesAreNotItsSources(_ sources: [String], _ generates: [String]) throws {
        let written = generates[0].hasSuffix("*.txt") ? "mkdir -p out && date +%N > out/r.txt" :
            "mkdir -p \(generates[0])/html && date +%N > \(generates[0])/html/index.html && date +%N > \(generates[0])/.buildinfo"
        let moon = try Moon(graph: """
            version: 1
            nodes:
              docs:
                sources: [\(sources.map { "\"\($0)\"" }.joined(separator: ", "))]
                generates: [\(generates.map { "\"\($0)\"" }.joined(separator: ", "))]
                run: \(written)
            """)
        _ = try shell("mkdir -p docs && echo a > docs/index.txt", in: moon)
        #expect(try moon.run(["run"]).status == 0)
        let second = try moon.run(["run", "--json"])
        #expect(second.events("skip", node: "docs").first?.reason == .upToDate, "\(sources) \(generates): \(second.stdout)")
        #expect(try moon.run(["status"]).stdout.contains("docs  up to date"))
        try moon.write("docs/index.txt", "b\n")
        #expect(try moon.run(["status"]).stdout.contains("docs  runs: docs/index.txt changed"))
    }

    /// A node that rewrites a file in place names it in both lists: that
    /// file stays its source, so an edit still reruns it.
    @Test func aFileRewrittenInPlaceStaysASource() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fmt:
                sources: [a.txt]
                generates: [a.txt]
                run: tr a-z A-Z < a.txt > a.tmp && mv a.tmp a.txt
            """)
        try moon.write("a.txt", "x\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("a.txt", "y\n")
        #expect(try moon.run(["status"]).stdout.contains("fmt  runs: a.txt changed"))
    }

    /// Watch mode watches what the sources mean: a hidden file below a
    /// directory named in `sources` reruns the node; one in `.git` does not.
    @Test func watchModeFollowsTheRule() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              consume:
                sources: [data]
                run: echo consumed
            """)
        _ = try shell("mkdir -p data/.git data/.cov && echo 1 > data/.cov/a && echo 1 > data/.git/HEAD", in: moon)
        let watch = try WatchTests.start(moon)
        defer { _ = try? watch.interrupt() }
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        try moon.write("data/.git/HEAD", "2\n")
        try moon.write("data/.cov/a", "2\n")
        #expect(eventually(60) { watch.count("graph-complete") >= 2 }, "\(watch.stderr)")
        let paths = watch.watchEvents().flatMap { $0.changed ?? [] }
        #expect(paths.contains("data/.cov/a") && !paths.contains("data/.git/HEAD"), "\(watch.watchEvents())")
    }
}
