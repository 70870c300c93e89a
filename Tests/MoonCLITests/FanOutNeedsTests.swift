import Foundation
import MoonEvents
import Testing

/// A fan-out that needs a fan-out, through the real binary: per-item needs
/// (`text[${{ item }}]`) pair each instance with its own item's instance;
/// a need on a whole fan-out is one barrier, whatever its size, in the
/// run, the no-op, the dry run, `moon status` and `moon graph`.
@Suite struct FanOutNeedsTests {
    /// A two-stage per-file pipeline: `text` copies each page, `count`
    /// counts its copy. `text` of a page fails while `fail-STEM` exists.
    static let pipeline = """
        version: 1
        nodes:
          text:
            for-each: {glob: "in/*.txt"}
            sources: ["${{ item }}"]
            generates: ["out/${{ item.stem }}.t"]
            run: mkdir -p out && test ! -e fail-${{ item.stem }} && cp ${{ item }} out/${{ item.stem }}.t
          count:
            for-each: {glob: "in/*.txt"}
            needs: ["text[${{ item }}]"]
            sources: ["out/${{ item.stem }}.t"]
            generates: ["out/${{ item.stem }}.c"]
            run: wc -c < out/${{ item.stem }}.t > out/${{ item.stem }}.c
        """

    static func pages(_ moon: Moon, _ stems: [String]) throws {
        try moon.makeDirectory("in")
        for stem in stems { try moon.write("in/\(stem).txt", "page \(stem)\n") }
    }

    static func order(_ result: Moon.Result) -> [String] {
        result.events.compactMap { event -> String? in
            let kind = event.name
            guard ["start", "complete", "skip", "error"].contains(kind) else { return nil }
            return "\(kind) \(event.node ?? "")"
        }
    }

    // MARK: - Per-item needs

    @Test func withKeepGoingAFailedInstanceSkipsOnlyItsOwnItemsDependent() throws {
        let moon = try Moon(graph: Self.pipeline)
        try Self.pages(moon, ["a", "b", "c"])
        try moon.write("fail-b", "")
        let result = try moon.run(["run", "-k", "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.events("skip", node: "count[in/b.txt]").first?.reason == .upstreamFailed)
        for stem in ["a", "c"] {
            #expect(result.events("complete", node: "count[in/\(stem).txt]").count == 1, "\(Self.order(result))")
            #expect(moon.read("out/\(stem).c") != nil)
        }
        let counts = result.events("graph-complete").first?.counts
        #expect(counts?.succeeded == 4 && counts?.failed == 1 && counts?.skipped == 1, "\(String(describing: counts))")
    }

    /// Pipelining, without sleeps: `text[b]` waits for a file that only
    /// `count[a]` writes, so the run ends only if `count[a]` can start
    /// while `text[b]` still runs (a barrier would wait for all of `text`).
    @Test func anInstanceStartsAsSoonAsItsOwnItemsNeedEnds() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              text:
                for-each: [a, b]
                run: |
                  if [ ${{ item }} = b ]; then
                    i=0; while [ ! -e released ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
                    test -e released
                  fi
              count:
                for-each: [a, b]
                needs: ["text[${{ item }}]"]
                run: if [ ${{ item }} = a ]; then touch released; fi
            """)
        let result = try moon.run(["run", "-j", "3", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let order = Self.order(result)
        // count[a] started while text[b] ran; which of the two ends is seen
        // first depends on how the host schedules their exits.
        let countA = try #require(order.firstIndex(of: "start count[a]"), "\(order)")
        let textB = try #require(order.firstIndex(of: "complete text[b]"), "\(order)")
        #expect(countA < textB, "\(order)")
        #expect(order.firstIndex(of: "start count[b]").map { $0 > textB } == true, "\(order)")
    }

    @Test func statusAfterOnePageChangedSaysOnlyThatPagesCountMayRun() throws {
        let moon = try Moon(graph: Self.pipeline)
        try Self.pages(moon, ["a", "b", "c", "d"])
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("in/c.txt", "page c, changed\n")
        let status = try moon.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 8, "\(lines)")
        let notUpToDate = lines.filter { !$0.hasSuffix("up to date") }
        #expect(notUpToDate.count == 2, "\(lines)")
        #expect(notUpToDate.contains { $0.hasPrefix("text[in/c.txt]") && $0.contains("runs: in/c.txt changed") }, "\(lines)")
        #expect(notUpToDate.contains { $0.hasPrefix("count[in/c.txt]") && $0.contains("may run: 'text[in/c.txt]' runs and writes its sources (out/c.t)") },
                "\(lines)")
        let dry = try moon.run(["run", "-n"])
        #expect(dry.stdout.contains("1 will run, 1 may run, 6 up to date"), "\(dry.stdout)")
    }

    @Test func itemPartsAndMatrixValuesMakeTheNeedsName() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                for-each: [in/a.txt, in/b.txt]
                run: echo gen ${{ item }}
              use:
                for-each: {glob: "src/*.c"}
                needs: ["gen[in/${{ item.stem }}.txt]"]
                run: echo use ${{ item }}
              build:
                matrix: {os: [linux, mac], cc: [gcc]}
                run: echo build
              ship:
                matrix: {os: [linux, mac]}
                needs: ["build[${{ matrix.os }},gcc]"]
                run: echo ship
            """)
        try moon.makeDirectory("src")
        try moon.write("src/a.c", "")
        try moon.write("src/b.c", "")
        let result = try moon.run(["graph", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let nodes = try #require(root["nodes"] as? [[String: Any]])
        func needs(_ name: String) -> [String]? { nodes.first { $0["name"] as? String == name }?["needs"] as? [String] }
        #expect(needs("use[src/a.c]") == ["gen[in/a.txt]"])
        #expect(needs("use[src/b.c]") == ["gen[in/b.txt]"])
        #expect(needs("ship[mac]") == ["build[mac,gcc]"])
    }

    @Test func aMadeNeedThatNamesNoInstanceIsAnErrorAtItsLine() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              text:
                for-each: [a, b]
                run: "true"
              count:
                for-each: [a, b, c]
                needs: ["text[${{ item }}]"]
                run: "true"
              ship:
                matrix: {os: [x]}
                needs: ["text[${{ item }}]"]
                run: "true"
              late:
                run: echo 'list=["a"]' >> "$MOON_OUTPUT"
              dyn:
                needs: [late]
                for-each: ${{ needs.late.outputs.list }}
                run: "true"
              dyn2:
                needs: [late, "text[${{ item }}]"]
                for-each: ${{ needs.late.outputs.list }}
                run: "true"
            """)
        let result = try moon.run(["check"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("moon.yaml:8:13: error: node 'count[c]' needs unknown node 'text[c]' (made from 'text[${{ item }}]')"),
                "\(result.stderr)")
        #expect(result.stderr.contains("help: 'text' has the instances text[a], text[b]"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:12:19: error: 'item' is only available in a node with 'for-each'"), "\(result.stderr)")
        #expect(result.stderr.contains("error: node 'dyn2' makes needs from its item, but its items are known only at run time"),
                "\(result.stderr)")
        #expect(!result.stderr.contains("error: node 'dyn'"), "\(result.stderr)")
    }

    // MARK: - One barrier per need on a whole fan-out

    static func twoStages(_ n: Int, _ moon: Moon) throws {
        try moon.makeDirectory("in")
        for i in 0..<n { try moon.write("in/f\(i)", "\(i)\n") }
    }

    static let wholeNeed = """
        version: 1
        nodes:
          a: { for-each: {glob: "in/*"}, sources: ["${{ item }}"], run: "echo v=$(head -n 1 ${{ item }}) >> $MOON_OUTPUT" }
          b: { for-each: {glob: "in/*"}, needs: [a], sources: ["${{ item }}"], run: "true" }
        """

    @Test func aNeedOnAWholeFanOutWaitsForAllOfItAndIsNoNodeOfTheRun() throws {
        let moon = try Moon(graph: Self.wholeNeed)
        try Self.twoStages(3, moon)
        let result = try moon.run(["run", "--json", "-j", "1"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let start = try #require(result.events("graph-start").first)
        #expect(start.plan?.count == 6 && start.plan?.contains("a") == false)
        #expect(result.events.allSatisfy { $0.node != "a" })
        let order = Self.order(result)
        let lastA = try #require(order.lastIndex { $0.hasPrefix("complete a[") })
        let firstB = try #require(order.firstIndex { $0.hasPrefix("start b[") })
        #expect(lastA < firstB, "\(order)")
        let counts = result.events("graph-complete").first?.counts
        #expect(counts?.succeeded == 6, "\(String(describing: counts))")
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("needs: a"), "\(list.stdout)")
    }

    /// Each dependent's fingerprint still reads what every instance of the
    /// fan-out left: a change of one instance's outputs reruns them all,
    /// a rerun that leaves the same outputs reruns none.
    @Test func theDependentsRerunWhenAnyInstancesOutputsChange() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { for-each: {glob: "in/*"}, sources: ["src/${{ item.name }}"], run: "echo v=$(head -n 1 src/${{ item.name }}) >> $MOON_OUTPUT" }
              b: { for-each: {glob: "in/*"}, needs: [a], sources: ["${{ item }}"], run: "true" }
            """)
        try Self.twoStages(3, moon)
        try moon.makeDirectory("src")
        for i in 0..<3 { try moon.write("src/f\(i)", "\(i)\n") }
        #expect(try moon.run(["run"]).status == 0)
        // Same first bytes: a[in/f1] reruns, leaves the same output.
        try moon.write("src/f1", "1\nmore\n")
        let same = try moon.run(["run", "--json"])
        #expect(same.events("complete", node: "a[in/f1]").count == 1)
        #expect(same.events("start").allSatisfy { $0.node?.hasPrefix("b[") == false }, "\(Self.order(same))")
        try moon.write("src/f1", "999\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("b[in/f0]  may run: 'a[in/f1]' runs (its outputs are inputs of this node)"), "\(status.stdout)")
        let changed = try moon.run(["run", "--json"])
        for i in 0..<3 { #expect(changed.events("complete", node: "b[in/f\(i)]").count == 1, "\(Self.order(changed))") }
        let dry = try moon.run(["run", "-n"])
        #expect(dry.stdout.contains("nothing to do: all 6 nodes are up to date"), "\(dry.stdout)")
    }

    /// Instances without sources behind a barrier: their outputs are
    /// remembered for the forecast, which says the dependents may run
    /// (not that their needs' outputs changed).
    @Test func instancesWithoutSourcesBehindABarrierMakeTheDependentsMayRun() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { for-each: [x, y], run: "echo v=${{ item }} >> $MOON_OUTPUT" }
              b: { for-each: [x, y], needs: [a], sources: [moon.yaml], run: "true" }
            """)
        #expect(try moon.run(["run"]).status == 0)
        let again = try moon.run(["run", "--json"])
        #expect(again.events("skip", node: "b[x]").first?.reason == .upToDate, "\(Self.order(again))")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("b[x]  may run: 2 of the 2 instances of 'a' run or may run, e.g. 'a[x]' runs (their outputs are inputs of this node)"),
                "\(status.stdout)")
    }

    /// 1,000 × 1,000 instances: the need is one barrier (2,000 edges in
    /// `moon graph`, not a million), and on a built tree the dry run says
    /// "nothing to do", at no more than a few times the no-op's cost.
    @Test func aThousandByAThousandIsLinearAndTheDryRunCostsNoMoreThanTheNoOp() throws {
        let moon = try Moon(graph: Self.wholeNeed)
        try Self.twoStages(1000, moon)
        let dot = try moon.run(["graph", "--format", "dot"])
        #expect(dot.stdout.components(separatedBy: " -> ").count - 1 == 2000)
        #expect(try moon.run(["run"], limit: 300).status == 0)
        var clock = ContinuousClock.now
        let noOp = try moon.run(["run"])
        let noOpTime = ContinuousClock.now - clock
        #expect((noOp.stdout + noOp.stderr).contains("ok - 2000 up to date"), "\(noOp.stdout)\(noOp.stderr)")
        clock = ContinuousClock.now
        let dry = try moon.run(["run", "-n"])
        let dryTime = ContinuousClock.now - clock
        #expect(dry.stdout.contains("nothing to do: all 2000 nodes are up to date"), "\(dry.stdout)")
        #expect(dryTime < noOpTime * 3 + .seconds(1), "dry run \(dryTime), no-op \(noOpTime)")
        let status = try moon.run(["status"])
        #expect(status.stdout.split(separator: "\n").count == 2000)
    }

    /// `--resume` takes a node without sources from the last run only when
    /// no need ran since: through a barrier, when no instance of it did.
    @Test func resumeRerunsADependentWhenAnInstanceBehindItsBarrierRan() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { for-each: [x, y], sources: ["in-${{ item }}"], run: "cat in-${{ item }}" }
              b: { for-each: [x, y], needs: [a], run: "test ! -e fail-${{ item }}" }
            """)
        for item in ["x", "y"] { try moon.write("in-\(item)", "\(item)\n") }
        try moon.write("fail-y", "")
        #expect(try moon.run(["run", "-k"]).status == 1)
        try FileManager.default.removeItem(atPath: moon.path("fail-y"))
        try moon.write("in-x", "changed\n")
        let resumed = try moon.run(["run", "--resume", "--json"])
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.events("start", node: "a[x]").count == 1, "\(Self.order(resumed))")
        #expect(resumed.events("start", node: "b[x]").count == 1, "\(Self.order(resumed))")
    }

    @Test func graphByTemplateDrawsOneNodePerFanOut() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              text: { for-each: [a, b, c], run: "true" }
              count: { for-each: [a, b, c], needs: ["text[${{ item }}]"], run: "true" }
              sum: { needs: [count], run: "true" }
              all: { needs: [sum, text], run: "true" }
            """)
        let text = try moon.run(["graph", "--templates"])
        #expect(text.stdout == """
            graph moon by template: 2 fan-outs, 2 other nodes
              text   3 instances
              count  3 instances  needs: text
              sum    needs: count
              all    needs: sum, text

            """, "\(text.stdout)\(text.stderr)")
        let dot = try moon.run(["graph", "--templates", "--format", "dot"])
        #expect(dot.stdout.components(separatedBy: " -> ").count - 1 == 4, "\(dot.stdout)")
        #expect(dot.stdout.contains(#""count" [label="count ×3", peripheries=2];"#), "\(dot.stdout)")
    }

    // MARK: - Forecast of groups and fan-ins

    /// A group (only needs) is as up to date as its needs: on a built tree
    /// nothing after it "may run"; when a need changes, what the group's
    /// dependents may run for is the node behind it that writes their sources.
    @Test func aGroupIsForecastFromItsNeeds() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen: { sources: [in.txt], generates: [out.txt], run: cp in.txt out.txt }
              all-gen: { needs: [gen] }
              use: { needs: [all-gen], sources: [out.txt], generates: [use.txt], run: cp out.txt use.txt }
            """)
        try moon.write("in.txt", "one\n")
        #expect(try moon.run(["run"]).status == 0)
        let dry = try moon.run(["run", "-n"])
        #expect(dry.stdout.contains("nothing to do: all 3 nodes are up to date"), "\(dry.stdout)")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("all-gen  up to date"), "\(status.stdout)")
        try moon.write("in.txt", "two\n")
        let changed = try moon.run(["status"])
        #expect(changed.stdout.contains("all-gen  may run: 'gen' runs (its outputs are inputs of this node)"), "\(changed.stdout)")
        #expect(changed.stdout.contains("use      may run: 'gen' runs and writes its sources (out.txt)"), "\(changed.stdout)")
    }

    /// A `for-each` over the output of a need that is up to date is
    /// forecast from the items the store holds: on a built tree the dry run
    /// says "nothing to do"; a changed instance makes the template run.
    @Test func aRunTimeFanOutIsForecastFromItsUpToDateNeedsItems() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              sections: { sources: [list.txt], run: echo "list=$(cat list.txt)" >> "$MOON_OUTPUT" }
              agg:
                needs: [sections]
                for-each: ${{ needs.sections.outputs.list }}
                sources: ["in/${{ item }}"]
                generates: ["out/${{ item }}"]
                run: mkdir -p out && cp in/${{ item }} out/${{ item }}
              report: { needs: [agg], sources: ["out/*"], generates: [report.txt], run: cat out/* > report.txt }
            """)
        try moon.write("list.txt", #"["a","b"]"#)
        try Self.twoStages(0, moon)
        try moon.write("in/a", "a\n")
        try moon.write("in/b", "b\n")
        #expect(try moon.run(["run"]).status == 0)
        let dry = try moon.run(["run", "-n"])
        #expect(dry.stdout.contains("nothing to do: all 3 nodes are up to date"), "\(dry.stdout)")
        try moon.write("in/b", "b, changed\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("agg       runs: 'agg[b]' runs: in/b changed"), "\(status.stdout)")
        #expect(status.stdout.contains("report    may run: 'agg' runs"), "\(status.stdout)")
    }

    /// A fan-in node's line gives one reason and a count, whatever the
    /// number of its needs that run.
    @Test func aFanInsStatusLineIsOneReasonAndACount() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              count:
                for-each: {glob: "in/*"}
                sources: ["${{ item }}"]
                generates: ["out/${{ item.name }}.c"]
                run: mkdir -p out && wc -c < ${{ item }} > out/${{ item.name }}.c
              sum:
                needs: [count]
                sources: ["out/*.c"]
                generates: [sum.txt]
                run: cat out/*.c > sum.txt
            """)
        try Self.twoStages(200, moon)
        #expect(try moon.run(["run"]).status == 0)
        for i in 0..<200 { try moon.write("in/f\(i)", "changed \(i)\n") }
        let status = try moon.run(["status"])
        let line = try #require(status.stdout.split(separator: "\n").first { $0.hasPrefix("sum") })
        #expect(line.contains("may run: 200 of its 200 needs run or may run, e.g. 'count[in/f0]' runs and writes its sources"), "\(line)")
        #expect(line.count < 300, "\(line)")
    }
}
