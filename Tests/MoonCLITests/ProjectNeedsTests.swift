import Foundation
import MoonEvents
import Testing

/// What real projects needed of the graph (a Python CI and a data
/// pipeline): needs on the root graph from an included file (`:NAME`),
/// `success-codes`, remembered checks, cheap checks first, forcing one node,
/// and messages for what users of other tools write.
/// Over 400 lines: one test per need the trials found, each with its own project.
@Suite struct ProjectNeedsTests {
    // MARK: - :NAME, a node of the root graph

    /// The order nodes started in, from `--json` events.
    private func starts(_ result: Moon.Result) -> [String] {
        result.events("start").compactMap { $0.node }
    }

    @Test func anIncludedFileNeedsARootNodeAsColonName() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              docs: docs/moon.yaml
            nodes:
              venv:
                run: echo venv > venv.txt
              all:
                needs: [docs:html]
            """)
        try moon.makeDirectory("docs")
        try moon.write("docs/moon.yaml", """
            version: 1
            nodes:
              html:
                needs: [":venv"]
                run: cat ../venv.txt
            """)
        // Naming only the included node brings the root node it needs.
        let result = try moon.run(["run", "--json", "docs:html"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(starts(result) == ["venv", "docs:html"])
        #expect(result.events("next", node: "docs:html").first?.text == "venv")
        let check = try moon.run(["check"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    @Test func colonNameMeansTheRootFromNestedIncludesAndFanOuts() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              a: a/moon.yaml
            nodes:
              venv:
                run: echo venv
            """)
        try moon.makeDirectory("a/b")
        try moon.write("a/moon.yaml", """
            version: 1
            includes:
              b: b/moon.yaml
            nodes:
              venv:
                run: echo a-venv
              lint:
                needs: [":venv"]
                run: echo lint
            """)
        // Two levels down, ':venv' is still the root's, not a's; and a
        // fan-out's instances each wait for it.
        try moon.write("a/b/moon.yaml", """
            version: 1
            nodes:
              test:
                for-each: [x, y]
                needs: [":venv", ":a:lint"]
                run: echo test ${{ item }}
            """)
        let result = try moon.run(["run", "--json", "-j1", "a:b:test"])
        #expect(result.status == 0, "\(result.stderr)")
        let started = starts(result)
        #expect(started.first == "venv")
        #expect(!started.contains("a:venv"), "':venv' names the root's venv, not the includer's")
        let lint = started.firstIndex(of: "a:lint"), test = started.firstIndex(of: "a:b:test[x]")
        #expect(lint != nil && test != nil && lint! < test!, "\(started)")
        #expect(Set(started) == ["venv", "a:lint", "a:b:test[x]", "a:b:test[y]"])
        // A dependency cycle through ':NAME' is found at load.
        try moon.write("moon.yaml", """
            version: 1
            includes:
              a: a/moon.yaml
            nodes:
              venv:
                needs: [a:b:test]
                run: echo venv
            """)
        let cycle = try moon.run(["check"])
        #expect(cycle.status == 2)
        #expect(cycle.stderr.contains("dependency cycle"))
    }

    @Test func anUnknownRootNodeIsAnErrorWhereItIsWritten() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              docs: docs/moon.yaml
            nodes:
              venv:
                run: echo venv
            """)
        try moon.makeDirectory("docs")
        try moon.write("docs/moon.yaml", """
            version: 1
            nodes:
              html:
                needs: [":vnev"]
                run: echo html
              self:
                needs: [":docs:self"]
                run: echo self
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("docs/moon.yaml:4:13: error: node 'docs:html' needs unknown root node ':vnev' (did you mean ':venv'?)"),
                "\(result.stderr)")
        #expect(result.stderr.contains("docs/moon.yaml:7:13: error: node 'docs:self' needs itself"))
        // moon run in docs/ reads docs/moon.yaml as the root: the help says so.
        let inside = try moon.run(["check"], in: "docs")
        #expect(inside.stderr.contains("this file is the root graph of this run"), "\(inside.stderr)")
        // What go-task users try first: a relative path to the includer.
        try moon.write("docs/moon.yaml", """
            version: 1
            nodes:
              pdf:
                needs: ["..:venv"]
                run: echo pdf
            """)
        let relative = try moon.run(["check"])
        #expect(relative.stderr.contains("docs/moon.yaml:4:13: error: invalid need '..:venv'; write ':NAME' for a node of the root graph"))
        #expect(relative.stderr.contains("did you mean ':venv'?"))
        // In the root file itself, ':NAME' is its own node.
        let root = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: echo a
              b:
                needs: [":a"]
                run: echo b
            """)
        let ran = try root.run(["run", "--json", "b"])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(starts(ran) == ["a", "b"])
    }

    // MARK: - success-codes

    @Test func successCodesCountAsSuccessAndOthersStillFail() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              none-collected:
                success-codes: [0, 5]
                run: exit 5
              next:
                needs: [none-collected]
                run: echo next
              broken:
                needs: [next]
                success-codes: [0, 5]
                run: exit 6
            """)
        let result = try moon.run(["run", "--json", "-j1"])
        #expect(result.status == 1)
        let complete = result.events("complete", node: "none-collected").first
        #expect(complete?.exitCode == 5, "the event stream says which code it exited with")
        #expect(result.events("complete", node: "next").count == 1, "a success code does not stop fail-fast's dependents")
        let error = result.events("error", node: "broken").first?.error
        #expect(error?.exitCode == 6)
        #expect(error?.message == "exited with code 6")
        // A success by a code the node no longer accepts does not stand.
        let tracked = try Moon(graph: """
            version: 1
            nodes:
              t:
                sources: [in.txt]
                success-codes: [0, 5]
                run: exit 5
            """)
        try tracked.write("in.txt", "x")
        #expect(try tracked.run(["run"]).status == 0)
        #expect(try tracked.run(["run", "--json"]).events("skip", node: "t").first?.reason == .upToDate)
        try tracked.write("moon.yaml", "version: 1\nnodes:\n  t:\n    sources: [in.txt]\n    run: exit 5\n")
        #expect(try tracked.run(["run"]).status == 1)
    }

    @Test func successCodesUnderDefaultsAndTheirErrors() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults:
              success-codes: [0, 5]
            nodes:
              a:
                run: exit 5
              b:
                success-codes: 3
                run: exit 3
              c:
                success-codes: [3]
                run: exit 0
            """)
        let result = try moon.run(["run", "--json", "-k", "a", "b", "c"])
        #expect(result.status == 1)
        #expect(result.events("complete", node: "a").count == 1)
        #expect(result.events("complete", node: "b").count == 1)
        let error = result.events("error", node: "c").first?.error
        #expect(error?.message == "exited with code 0, which its success-codes leave out")
        #expect(result.stderr.contains("'success-codes' leaves out 0"))

        let bad = try Moon(graph: """
            version: 1
            defaults:
              success-codes: {a: 1}
            nodes:
              a:
                success-codes: [0, 256]
                run: exit 5
              b:
                success-codes: [0, "five"]
                run: exit 5
              c:
                success-codes: []
                run: exit 5
            """)
        let check = try bad.run(["check"])
        #expect(check.status == 2)
        #expect(check.stderr.contains("moon.yaml:3:18: error: expected a list of exit codes for 'success-codes', such as [0, 5], found a mapping"),
                "\(check.stderr)")
        #expect(check.stderr.contains("moon.yaml:6:24: error: invalid exit code '256' in 'success-codes'; write an integer from 0 to 255"))
        #expect(check.stderr.contains("moon.yaml:9:24: error: invalid exit code the string \"five\" in 'success-codes'"))
        #expect(check.stderr.contains("moon.yaml:12:20: error: 'success-codes' is empty"))
    }
}

/// A check-only node (sources, no generates) is remembered per fingerprint.
@Suite struct RememberedCheckTests {
    private func graph(cache: String = "") -> String {
        """
        version: 1
        cache:
          dir: .cache
        nodes:
          lint:
            sources: [src.py]
            run: echo linting; cat src.py >> lint.log\(cache)
          build:
            sources: [src.py]
            generates: [out.txt]
            run: cp src.py out.txt
        """
    }

    private func runs(_ moon: Moon) -> Int {
        (moon.read("lint.log") ?? "").split(separator: "\n").count
    }

    @Test func aCheckThatPassedForTheseInputsIsNotRunAgainAfterASwitch() throws {
        let moon = try Moon(graph: graph())
        try moon.write("src.py", "A\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src.py", "B\n")
        #expect(try moon.run(["run"]).status == 0)
        #expect(runs(moon) == 2)
        try moon.write("src.py", "A\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("passed before with these inputs"), "\(status.stdout)")
        let back = try moon.run(["run", "--json"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(runs(moon) == 2, "A passed before: lint is not run again")
        let skip = back.events("skip", node: "lint").first
        #expect(skip?.reason == .cacheHit)
        // The human line says why it did not run.
        try moon.write("src.py", "B\n")
        let text = try moon.run(["run", "-v"])
        #expect(text.stdout.contains("lint skipped (passed before with these inputs)"), "\(text.stdout)")
        #expect(runs(moon) == 2)
    }

    @Test func noCacheAndCacheFalseForgetIt() throws {
        let moon = try Moon(graph: graph(cache: "\n    cache: false"))
        try moon.write("src.py", "A\n")
        _ = try moon.run(["run"])
        try moon.write("src.py", "B\n")
        _ = try moon.run(["run"])
        try moon.write("src.py", "A\n")
        _ = try moon.run(["run"])
        #expect(runs(moon) == 3, "cache: false: the node runs again")

        let other = try Moon(graph: graph())
        try other.write("src.py", "A\n")
        _ = try other.run(["run", "--no-cache"])
        try other.write("src.py", "B\n")
        _ = try other.run(["run", "--no-cache"])
        try other.write("src.py", "A\n")
        _ = try other.run(["run", "--no-cache"])
        #expect(runs(other) == 3, "--no-cache neither stores nor finds it")
        // A failed check is not remembered: it runs again.
        try other.write("src.py", "FAIL\n")
        try other.write("moon.yaml", graph().replacingOccurrences(of: "cat src.py >> lint.log", with: "cat src.py >> lint.log; ! grep -q FAIL src.py"))
        #expect(try other.run(["run"]).status == 1)
        try other.write("src.py", "A\n")
        _ = try other.run(["run"])
        try other.write("src.py", "FAIL\n")
        #expect(try other.run(["run"]).status == 1)
        #expect(runs(other) == 6)
    }
}

/// `priority:` starts cheap checks first, before the critical path decides.
@Suite struct PriorityTests {
    private func graph(lint: String) -> String {
        """
        version: 1
        nodes:
          venv:
            run: echo venv
          tool:
            run: echo tool
          lint:
            needs: [venv, tool]
            run: \(lint)
        \(lint.contains("priority") ? "" : "    priority: 1")
          typecheck:
            needs: [venv]
            run: echo typecheck
          test:
            for-each: [a, b, c, d]
            needs: [venv]
            run: echo test ${{ item }}
          coverage:
            needs: [test]
            run: echo coverage
          ci:
            needs: [lint, typecheck, coverage]
        """
    }

    @Test func aCheapCheckWithPriorityStartsBeforeTheLongerChainsAndFailsFastFirst() throws {
        let moon = try Moon(graph: graph(lint: "echo lint"))
        let result = try moon.run(["run", "--json", "-j1"])
        #expect(result.status == 0, "\(result.stderr)")
        let started = result.events("start").compactMap { $0.node }
        // lint's need 'tool' is raised with it, ahead of the test chain.
        #expect(Array(started.prefix(3)) == ["venv", "tool", "lint"], "\(started)")
        // A failing lint stops the run before any test has started.
        try moon.write("moon.yaml", graph(lint: "exit 1"))
        let failed = try moon.run(["run", "--json", "-j1"])
        #expect(failed.status == 1)
        // (venv and tool share lint's rank; between them, the recorded times of the first run decide.)
        let restarted = failed.events("start").compactMap { $0.node }
        #expect(restarted.count == 3 && Set(restarted.prefix(2)) == ["venv", "tool"] && restarted.last == "lint", "\(restarted)")
        // The dry run lists the same order.
        let plan = try moon.run(["run", "-n"])
        let lines = plan.stdout.split(separator: "\n").map(String.init)
        let lint = lines.firstIndex { $0.contains("lint") }, test = lines.firstIndex { $0.contains("test[a]") }
        #expect(lint != nil && test != nil && lint! < test!, "\(plan.stdout)")
    }

    @Test func aLowPriorityWaitsAndAnInvalidOneIsAnError() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow-docs:
                priority: -1
                run: echo docs
              a:
                run: echo a
              b:
                run: echo b
            """)
        let result = try moon.run(["run", "--json", "-j1"])
        #expect(result.events("start").compactMap { $0.node } == ["a", "b", "slow-docs"])
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              a:
                priority: 11
                run: echo a
              b:
                priority: high
                run: echo b
            """)
        let check = try moon.run(["check"])
        #expect(check.status == 2)
        #expect(check.stderr.contains("moon.yaml:4:15: error: invalid priority '11'; write an integer from -10 to 10"), "\(check.stderr)")
        #expect(check.stderr.contains("moon.yaml:7:15: error: invalid priority 'high'"))
    }
}

/// The run's `--timeout` is named in the human summary, not only in `--json`.
@Suite struct RunTimeoutSummaryTests {
    @Test func theSummarySaysTheRunsTimeoutExpired() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              quick:
                run: echo quick
              slow:
                for-each: [a, b]
                run: sleep 30
              after:
                needs: [slow]
                run: echo after
            """)
        let result = try moon.run(["run", "--timeout", "500ms", "--grace", "1s"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("moon: FAILED: the run's --timeout of 500ms expired - "), "\(result.stdout)")
        let json = try moon.run(["run", "--json", "--timeout", "500ms", "--grace", "1s"])
        let complete = json.events("graph-complete").first
        #expect(complete?.timedOut == "500ms")
        // A replay of the stream says it as the run did.
        try moon.write("run.jsonl", json.stdout)
        let replay = try moon.run(["replay", "run.jsonl"])
        #expect(replay.stdout.contains("FAILED: the run's --timeout of 500ms expired"), "\(replay.stdout)")
        // A run that ends in time says nothing of it.
        let quick = try moon.run(["run", "--timeout", "30s", "quick"])
        #expect(quick.status == 0 && !quick.stdout.contains("--timeout"))
    }
}

/// `--force-only`: the named nodes run even when up to date; their needs do not.
@Suite struct ForceOnlyTests {
    @Test func forceOnlyRunsTheNamedNodesButNotTheirNeeds() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              venv:
                sources: [req.txt]
                generates: [venv.txt]
                run: cp req.txt venv.txt; echo venv >> log
              test:
                for-each: [a, b]
                needs: [venv]
                sources: [venv.txt]
                run: echo test ${{ item }} >> log
            """)
        try moon.write("req.txt", "1\n")
        #expect(try moon.run(["run"]).status == 0)
        let forced = try moon.run(["run", "--json", "--force-only", "test[a]"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.events("start").compactMap { $0.node } == ["test[a]"])
        #expect(forced.events("skip", node: "venv").first?.reason == .upToDate)
        // A fan-out's name forces all its instances; the dry run agrees.
        let plan = try moon.run(["run", "-n", "--force-only", "test"])
        #expect(plan.stdout.contains("test[b]"))
        let all = try moon.run(["run", "--json", "--force-only", "test"])
        #expect(Set(all.events("start").compactMap { $0.node }) == ["test[a]", "test[b]"])
        // A need that is not up to date still runs; -B forces everything.
        try moon.write("req.txt", "2\n")
        let stale = try moon.run(["run", "--json", "--force-only", "test[b]"])
        #expect(stale.events("start").compactMap { $0.node } == ["venv", "test[b]"])
        let everything = try moon.run(["run", "--json", "-B", "test[b]"])
        #expect(everything.events("start").compactMap { $0.node } == ["venv", "test[b]"])
        let help = try moon.run(["run", "--help"])
        #expect(help.stdout.contains("--force-only"))
        #expect(try moon.run(["run", "--force-only", "--watch"]).status == 2)
    }
}

/// Messages for what users of other tools write, and for indentation slips.
@Suite struct OtherToolsMessagesTests {
    private func check(_ graph: String) throws -> String {
        let moon = try Moon(graph: graph)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        return result.stderr
    }

    @Test func snakemakeRuleKeysGetMoonsWords() throws {
        let stderr = try check("""
            version: 1
            nodes:
              text:
                input: "man/{sec}/{page}.gz"
                output: "out/{sec}/{page}.txt"
                shell: "zcat {input} | groff -man > {output}"
              count:
                depends_on: [text]
                resources: {mem_mb: 100}
                cmd: wc -w
            """)
        #expect(stderr.contains("moon.yaml:4:5: error: unknown key 'input' in node 'text' (did you mean 'sources'?)"), "\(stderr)")
        #expect(stderr.contains("moon.yaml:5:5: error: unknown key 'output' in node 'text' (did you mean 'generates'?)"))
        #expect(stderr.contains("moon.yaml:6:5: error: 'shell' names the shell (sh or bash); the command goes in 'run'"))
        #expect(!stderr.contains("has nothing to do"), "the command is misplaced, not missing")
        #expect(stderr.contains("unknown key 'depends_on' in node 'count' (did you mean 'needs'?)"))
        #expect(stderr.contains("unknown key 'cmd' in node 'count' (did you mean 'run'?)"))
        #expect(stderr.contains("error: unknown key 'mem_mb' in resources (did you mean 'memory'?)"), "\(stderr)")
        #expect(stderr.contains("'memory' takes a size with its unit"))
    }

    @Test func aGlobStringForEachAndAPathNeedSayWhatToWrite() throws {
        let stderr = try check("""
            version: 1
            nodes:
              count:
                for-each: "man/*/*.gz"
                run: wc -w ${{ item }}
              sections:
                needs: [out/counts]
                run: ls
              lint:
                for-each: "a.py"
                run: ruff ${{ item }}
            """)
        #expect(stderr.contains("help: for one instance per file the glob matches, write for-each: {glob: \"man/*/*.gz\"}"), "\(stderr)")
        #expect(stderr.contains("help: write the items as a YAML list, [a, b], even for one item"))
        #expect(!stderr.contains("'item' is only available"), "no cascade from the for-each error")
        #expect(stderr.contains("moon.yaml:7:13: error: needs names nodes, not files: 'out/counts' is a path"))
        #expect(stderr.contains("a file a node reads goes in its 'sources'"))
        #expect(stderr.contains("3 errors in moon.yaml"))
        // When a node generates the path, the help names it.
        let named = try check("""
            version: 1
            nodes:
              count:
                for-each: [a, b]
                generates: ["out/counts/${{ item }}.tsv"]
                run: touch out/counts/${{ item }}.tsv
              sections:
                needs: [out/counts/]
                run: ls out/counts
            """)
        #expect(named.contains("moon.yaml:8:13: error: needs names nodes, not files: 'out/counts/' is a path"), "\(named)")
        #expect(named.contains("help: node 'count' generates it: write needs: [count]"))
    }

    @Test func aDedentedNodeKeyAndAnAliasedListPointWhereTheSlipIs() throws {
        let dedented = try check("""
            version: 1
            nodes:
              venv:
                run: echo venv
              lint:
                needs: [venv]
              run: ruff check
              sources: [src]
            """)
        #expect(dedented.contains("moon.yaml:7:3: error: 'run' looks like a key of node 'lint' indented at the node-name level; indent it under 'lint'"),
                "\(dedented)")
        #expect(dedented.contains("moon.yaml:8:3: error: 'sources' looks like a key of node 'lint'"))
        #expect(!dedented.contains("expected a mapping for node 'run'"))
        #expect(dedented.contains("2 errors in moon.yaml"))

        let overindented = try check("""
            version: 1
            nodes:
              lint:
                  description: ruff
                run: ruff check
            """)
        #expect(overindented.contains("moon.yaml:5:5: error: did not find expected key"), "\(overindented)")
        #expect(overindented.contains("this key is at column 5, line 4 above it at column 7"))

        let aliased = try check("""
            version: 1
            x-code: &code ["src/**/*.py", "tests/**/*.py"]
            nodes:
              lint:
                sources: [*code, README.md]
                run: ruff check
              types:
                sources: [README.md, *code]
                run: mypy
            """)
        #expect(aliased.contains("moon.yaml:5:15: error: expected a glob (a path relative to the graph file), found a list"), "\(aliased)")
        #expect(aliased.contains("moon.yaml:8:26: error: expected a glob"))
        #expect(aliased.contains("often an alias of a list"))
    }
}
