import Foundation
import MoonEvents
import Testing

/// Watch mode loses nothing a plain run would keep: a need skipped when
/// watch started (up to date, restored from the cache, resumed) stands with
/// its recorded outputs in every rerun, so what its dependents see, their
/// fingerprints and their cache keys are a plain run's.
/// Over 400 lines: one test per way a need stands when watch mode starts.
@Suite("watch mode never loses work")
struct WatchNeverLosesWorkTests {
    typealias Watching = WatchTests.Watching

    /// The lines nodes printed, in order.
    static func printed(_ watch: Watching) -> [String] {
        watch.events.filter { $0.name == "next" }.compactMap { $0.text }
    }

    static func skipReason(_ events: [RunEvent], _ node: String) -> SkipReason? {
        events.last { $0.name == "skip" && $0.node == node }?.reason
    }

    /// The status line of each node, by name.
    static func status(_ moon: Moon) throws -> [String: String] {
        let result = try moon.run(["status"])
        var lines: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 1)
            if words.count == 2 { lines[String(words[0])] = words[1].trimmingCharacters(in: .whitespaces) }
        }
        return lines
    }

    /// a → m → b, each reading the output of the one before it.
    static let chain = """
        version: 1
        nodes:
          a:
            sources: [a.txt]
            run: echo "v=$(cat a.txt)" >> "$MOON_OUTPUT"
          m:
            needs: a
            sources: [m.txt]
            run: |
              echo "m sees v=${{ needs.a.outputs.v }}"
              echo "w=${{ needs.a.outputs.v }}$(cat m.txt)" >> "$MOON_OUTPUT"
          b:
            needs: m
            sources: [b.txt]
            run: echo "b sees w=${{ needs.m.outputs.w }}"
        """

    static func chainProject() throws -> Moon {
        let moon = try Moon(graph: chain)
        try moon.write("a.txt", "1\n")
        try moon.write("m.txt", "x\n")
        try moon.write("b.txt", "b\n")
        return moon
    }

    @Test("a need up to date when watch started gives its outputs to a rerun of its dependent (python-ci F1)")
    func upToDateNeedKeepsItsOutputs() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                sources: [a.txt]
                run: echo "v=1" >> "$MOON_OUTPUT"
              b:
                needs: a
                sources: [b.txt]
                run: echo "b sees v=${{ needs.a.outputs.v }}"
            """)
        try moon.write("a.txt", "a\n")
        try moon.write("b.txt", "b\n")
        #expect(try moon.run(["run"]).status == 0)
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(Self.skipReason(watch.events, "a") == .upToDate)
        try moon.write("b.txt", "b2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(Self.printed(watch) == ["b sees v=1"], "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
        // What watch mode recorded is a plain run's: nothing is stale.
        let status = try Self.status(moon)
        #expect(status["a"] == "up to date" && status["b"] == "up to date", "\(status)")
    }

    @Test("two levels: a rerun of the middle node and of the last see the outputs of needs skipped at the start; status after is up to date")
    func needTwoLevelsUp() throws {
        let moon = try Self.chainProject()
        #expect(try moon.run(["run"]).status == 0)
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        try moon.write("b.txt", "b2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        try moon.write("m.txt", "y\n")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        try moon.write("b.txt", "b3\n")
        #expect(watch.waitForRuns(4), "\(watch.stderr)")
        #expect(Self.printed(watch) == ["b sees w=1x", "m sees v=1", "b sees w=1y", "b sees w=1y"], "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
        let status = try Self.status(moon)
        #expect(["a", "m", "b"].allSatisfy { status[$0] == "up to date" }, "\(status)")
        // The next plain run has nothing to do.
        let plain = try moon.run(["run", "--json"])
        #expect(plain.events("start").isEmpty, "\(plain.stdout)")
    }

    @Test("a need whose outputs change during the session: later reruns see the new outputs, not those of the start")
    func outputsChangedDuringTheSession() throws {
        let moon = try Self.chainProject()
        #expect(try moon.run(["run"]).status == 0)
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        try moon.write("a.txt", "2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        try moon.write("b.txt", "b2\n")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        #expect(Self.printed(watch) == ["m sees v=2", "b sees w=2x", "b sees w=2x"], "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
        let status = try Self.status(moon)
        #expect(["a", "m", "b"].allSatisfy { status[$0] == "up to date" }, "\(status)")
    }

    /// `b` is cached; `a` only gives it an output.
    static let cached = """
        version: 1
        nodes:
          a:
            sources: [a.txt]
            run: echo "v=1" >> "$MOON_OUTPUT"
          b:
            needs: a
            sources: [b.txt]
            generates: [out.txt]
            run: cp b.txt out.txt
        """

    @Test("watch mode restores from the cache and stores in it; its entries are a plain run's (python-ci F1b)")
    func watchModeCacheEntriesAreAPlainRunsEntries() throws {
        let moon = try Moon(graph: Self.cached)
        try moon.write("a.txt", "a\n")
        try moon.write("b.txt", "A\n")
        #expect(try moon.run(["run"]).status == 0)
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        try moon.write("b.txt", "B\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.count("complete", node: "b") == 1)
        // Back to A: the entry the plain run stored.
        try moon.write("b.txt", "A\n")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        #expect(Self.skipReason(watch.events, "b") == .cacheHit, "\(watch.events.filter { $0.node == "b" })")
        #expect(moon.read("out.txt") == "A\n")
        #expect(try watch.interrupt().status == 130)
        let status = try Self.status(moon)
        #expect(status["a"] == "up to date" && status["b"] == "up to date", "\(status)")
        // B's entry, stored in watch mode, is hit by a plain run.
        try moon.write("b.txt", "B\n")
        let plain = try moon.run(["run", "--json"])
        #expect(Self.skipReason(plain.events, "b") == .cacheHit, "\(plain.stdout)")
        #expect(moon.read("out.txt") == "B\n")
    }

    @Test("a need restored from the cache when watch started gives its outputs to a rerun of its dependent")
    func restoredNeedKeepsItsOutputs() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                sources: [a.txt]
                generates: [a.out]
                run: cp a.txt a.out && echo "v=$(cat a.txt)" >> "$MOON_OUTPUT"
              b:
                needs: a
                sources: [b.txt]
                cache: false  # (else its success is remembered and the first run skips it)
                run: echo "b sees v=${{ needs.a.outputs.v }}"
            """)
        try moon.write("a.txt", "7\n")
        try moon.write("b.txt", "b\n")
        #expect(try moon.run(["run"]).status == 0)
        // The state is gone (a fresh checkout): `a` comes back from the cache.
        try FileManager.default.removeItem(atPath: moon.path(".moon"))
        try FileManager.default.removeItem(atPath: moon.path("a.out"))
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(Self.skipReason(watch.events, "a") == .cacheHit, "\(watch.stdoutLines)")
        try moon.write("b.txt", "b2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(Self.printed(watch) == ["b sees v=7", "b sees v=7"], "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
        let status = try Self.status(moon)
        #expect(status["a"] == "up to date" && status["b"] == "up to date", "\(status)")
    }

    @Test("--resume --watch: a need resumed from the last run gives its outputs to every rerun")
    func resumedNeedKeepsItsOutputs() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: echo "v=$(cat a.txt)" >> "$MOON_OUTPUT"
              b:
                needs: a
                sources: [b.txt]
                run: grep -q ok b.txt && echo "b sees v=${{ needs.a.outputs.v }}"
            """)
        try moon.write("a.txt", "5\n")
        try moon.write("b.txt", "bad\n")
        #expect(try moon.run(["run"]).status == 1)
        // `a` is not run again: its outputs are the last run's.
        try moon.write("a.txt", "6\n")
        let watch = try WatchTests.start(moon, ["--resume"])
        #expect(watch.waitForRuns(1))
        #expect(Self.skipReason(watch.events, "a") == .resumed, "\(watch.stdoutLines)")
        try moon.write("b.txt", "ok\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(Self.printed(watch) == ["b sees v=5"], "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
    }

    /// A run-time fan-out whose instances write what `report` reads (data-pipeline finding 4).
    static let dynamic = """
        version: 1
        nodes:
          list:
            sources: [items.txt]
            run: echo "list=$(cat items.txt)" >> "$MOON_OUTPUT"
          agg:
            needs: [list]
            for-each: ${{ needs.list.outputs.list }}
            sources: ["in/${{ item }}.txt"]
            generates: ["out/${{ item }}.txt"]
            run: mkdir -p out && cp in/${{ item }}.txt out/${{ item }}.txt
          report:
            needs: [agg]
            sources: ["out/*.txt"]
            run: sleep 1 && cat out/*.txt
        """

    static func dynamicProject() throws -> Moon {
        let moon = try Moon(graph: dynamic)
        try FileManager.default.createDirectory(atPath: moon.path("in"), withIntermediateDirectories: true)
        try moon.write("items.txt", #"["x","y"]"# + "\n")
        try moon.write("in/x.txt", "x1\n")
        try moon.write("in/y.txt", "y1\n")
        return moon
    }

    /// No node of the watch was cancelled, and no run failed.
    static func noCancel(_ watch: Watching) -> Bool {
        !watch.events.contains { $0.name == "error" }
            && !watch.events.contains { $0.name == "graph-complete" && $0.ok == false }
    }

    @Test("what run-time instances write is moon's own: no rerun, no cancelled consumer; their sources rerun them (data-pipeline 4)")
    func runTimeInstancesWritesNeverRerun() throws {
        let moon = try Self.dynamicProject()
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        // An instance's own source reruns it, and what needs it, once. Each
        // edit is a sentinel: a rerun for what the instances wrote would come
        // before its rerun, or merge into it.
        try moon.write("in/x.txt", "x2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.watchEvents().count == 1, "\(watch.stdoutLines)")
        #expect(watch.watchEvents().last?.changed == ["in/x.txt"], "\(watch.stdoutLines)")
        #expect(watch.started(inRerun: 1).sorted() == ["agg[x]", "report"], "\(watch.stdoutLines)")
        #expect(Self.noCancel(watch), "\(watch.stdoutLines)")
        #expect(Self.printed(watch).suffix(2) == ["x2", "y1"])
        // A new item: its instance runs, and its write is moon's own too.
        try FileManager.default.createDirectory(atPath: moon.path("in"), withIntermediateDirectories: true)
        try moon.write("in/z.txt", "z1\n")
        try moon.write("items.txt", #"["x","y","z"]"# + "\n")
        #expect(eventually(60) { watch.started(inRerun: 2).contains("report") && watch.count("graph-complete") >= 3 }, "\(watch.stdoutLines)")
        // (The list is an output of `list`, which every instance's fingerprint holds: all run, as in a plain run.)
        #expect(Set(watch.started(inRerun: 2)).isSuperset(of: ["agg[z]", "list", "report"]), "\(watch.stdoutLines)")
        #expect(moon.read("out/z.txt") == "z1\n")
        try moon.write("in/y.txt", "y2\n")
        #expect(watch.waitForRuns(4), "\(watch.stderr)")
        #expect(watch.watchEvents().count == 3, "\(watch.stdoutLines)")
        #expect(watch.watchEvents().last?.changed == ["in/y.txt"], "\(watch.stdoutLines)")
        #expect(Self.noCancel(watch), "\(watch.stdoutLines)")
        #expect(try watch.interrupt().status == 130)
    }

    /// A `for-each` glob with a node that needs the whole fan-out.
    static let tests = """
        version: 1
        nodes:
          test:
            for-each: { glob: "tests/test_*.py", exclude: "tests/test_skip*.py" }
            sources: ["${{ item }}"]
            run: echo "TESTING ${{ item }}"
          report:
            needs: [test]
            run: echo "REPORT $(ls tests | wc -l)"
        """

    static func testsProject(_ graph: String = tests) throws -> Moon {
        let moon = try Moon(graph: graph)
        try FileManager.default.createDirectory(atPath: moon.path("tests"), withIntermediateDirectories: true)
        try moon.write("tests/test_a.py", "a\n")
        try moon.write("tests/test_c.py", "c\n")
        return moon
    }

    /// The nodes started in the run of the `index`th watch event, sorted.
    static func ran(_ watch: Watching, _ index: Int) -> [String] {
        watch.started(inRerun: index).sorted()
    }

    @Test("a for-each glob is expanded again: a new file's instance runs, a deleted or renamed one's never again; an excluded file changes nothing (python-ci F3)")
    func forEachGlobExpandedAgain() throws {
        let moon = try Self.testsProject()
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(Self.ran(watch, 0) == ["report", "test[tests/test_a.py]", "test[tests/test_c.py]"])
        // A new file: its instance runs, and what needs the fan-out.
        try moon.write("tests/test_b.py", "b\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(Self.ran(watch, 1) == ["report", "test[tests/test_b.py]"], "\(watch.stdoutLines)")
        // A deleted file: its instance is retired; what needs the fan-out runs.
        #expect(unlink(moon.path("tests/test_c.py")) == 0)
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        #expect(Self.ran(watch, 2) == ["report"], "\(watch.stdoutLines)")
        // A renamed file: the new name's instance runs, the old one's does not.
        #expect(rename(moon.path("tests/test_a.py"), moon.path("tests/test_d.py")) == 0)
        #expect(watch.waitForRuns(4), "\(watch.stderr)")
        #expect(Self.ran(watch, 3) == ["report", "test[tests/test_d.py]"], "\(watch.stdoutLines)")
        // An edit of a file still there reruns its instance only (and what needs it).
        try moon.write("tests/test_b.py", "b2\n")
        #expect(watch.waitForRuns(5), "\(watch.stderr)")
        #expect(Self.ran(watch, 4) == ["report", "test[tests/test_b.py]"], "\(watch.stdoutLines)")
        // A file the glob excludes changes nothing: the sentinel edit after it
        // has the next rerun, and its own paths.
        try moon.write("tests/test_skip_me.py", "s\n")
        try moon.write("tests/test_b.py", "b3\n")
        #expect(watch.waitForRuns(6), "\(watch.stderr)")
        #expect(watch.watchEvents().count == 5, "\(watch.stdoutLines)")
        #expect(watch.watchEvents().last?.changed == ["tests/test_b.py"], "\(watch.stdoutLines)")
        let result = try watch.interrupt()
        #expect(result.status == 130)
        let started = result.events("start").compactMap { $0.node }
        #expect(started.filter { $0 == "test[tests/test_c.py]" }.count == 1)
        #expect(started.filter { $0 == "test[tests/test_a.py]" }.count == 1)
        // After watch mode a plain run agrees: nothing to do but what has no sources.
        let plain = try moon.run(["run", "--json"])
        #expect(plain.events("start").compactMap { $0.node } == ["report"], "\(plain.stdout)")
    }

    @Test("a for-each glob that comes to match nothing is the load's error; a file created again mends it")
    func forEachGlobEmptiedAndRefilled() throws {
        let moon = try Self.testsProject()
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(unlink(moon.path("tests/test_a.py")) == 0)
        #expect(unlink(moon.path("tests/test_c.py")) == 0)
        #expect(eventually(60) { watch.stderr.contains("matches no file") }, "\(watch.stderr)")
        try moon.write("tests/test_e.py", "e\n")
        #expect(eventually(60) { watch.count("complete", node: "test[tests/test_e.py]") == 1 }, "\(watch.stderr) \(watch.stdoutLines)")
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a new file of a for-each glob during a run: the instance running carries on, the new one runs")
    func newFileDuringARun() throws {
        let moon = try Self.testsProject("""
            version: 1
            nodes:
              test:
                for-each: { glob: "tests/test_*.py" }
                sources: ["${{ item }}"]
                run: |
                  if [ ${{ item }} = tests/test_c.py ]; then touch started; while [ ! -e go ]; do sleep 0.05; done; fi
                  echo "TESTING ${{ item }}"
            """)
        let watch = try WatchTests.start(moon)
        #expect(eventually(60) { moon.read("started") != nil })
        try moon.write("tests/test_b.py", "b\n")
        // The new file is seen while test_c runs; test_c is handed over, not cancelled: the
        // next run starts it as carried (its second start) while it still waits for `go`.
        #expect(eventually(60) { watch.count("graph-complete") >= 1 && watch.count("start", node: "test[tests/test_c.py]") == 2 },
                "\(watch.stdoutLines)")
        try moon.write("go", "")
        #expect(eventually(60) { watch.count("complete", node: "test[tests/test_c.py]") == 1 && watch.count("complete", node: "test[tests/test_b.py]") == 1 },
                "\(watch.stdoutLines)")
        #expect(!watch.events.contains { $0.name == "error" }, "\(watch.stdoutLines)")
        #expect(watch.count("start", node: "test[tests/test_c.py]") == 2)  // its start, and its `carried` start
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a file created in, or deleted from, a node's sources glob reruns it")
    func sourcesGlobSeesNewAndDeletedFiles() throws {
        let moon = try Self.testsProject("""
            version: 1
            nodes:
              lint:
                sources: ["tests/*.py"]
                run: echo "LINT $(ls tests | wc -l)"
            """)
        let watch = try WatchTests.start(moon)
        #expect(watch.waitForRuns(1))
        try moon.write("tests/new.py", "n\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(unlink(moon.path("tests/test_a.py")) == 0)
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        #expect(Self.printed(watch).map { $0.replacingOccurrences(of: " ", with: "") } == ["LINT2", "LINT3", "LINT2"], "\(watch.stdoutLines)")
        #expect(try watch.interrupt().status == 130)
    }

    @Test("an edit of a node that ended, while a node it does not affect runs: the run hands it over and ends, the next adopts it")
    func editWhileAnUnaffectedNodeRuns() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow:
                sources: [s.txt]
                run: touch started; while [ ! -e go ]; do sleep 0.05; done; echo SLOW
              quick:
                sources: [q.txt]
                run: cat q.txt
            """)
        try moon.write("s.txt", "s\n")
        try moon.write("q.txt", "q1\n")
        let watch = try WatchTests.start(moon)
        #expect(eventually(60) { moon.read("started") != nil && watch.count("complete", node: "quick") == 1 })
        try moon.write("q.txt", "q2\n")
        #expect(eventually(60) { watch.count("complete", node: "quick") == 2 }, "\(watch.stdoutLines)")
        try moon.write("go", "")
        #expect(watch.waitForRuns(2), "\(watch.stdoutLines)")
        #expect(Self.printed(watch) == ["q1", "q2", "SLOW"], "\(watch.stdoutLines)")
        #expect(watch.count("error") == 0)
        #expect(try watch.interrupt().status == 130)
    }
}

extension WatchTests.Watching {
    /// Its stdout's lines, for a failure's message.
    var stdoutLines: [String] {
        ((try? String(contentsOf: running.out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
