import Foundation
import Testing

/// Which graph file moon reads and which of its nodes it runs: the nearest
/// moon.yaml/moon.yml upward (as git, go-task and just find theirs), the
/// file's `default:`, quoted globs and `--exclude`, `internal:` nodes.
/// Over 400 lines: the suites share the discovery and selection set-up.
@Suite struct DiscoveryTests {
    /// A graph whose nodes write where they run: paths stay relative to the graph file.
    static let graph = """
        version: 1
        nodes:
          where: { run: "pwd > ran-here" }
          lint: { run: "echo linting" }
        """

    private func tree(_ graph: String = Self.graph, name: String = "moon.yaml") throws -> Moon {
        let moon = try Moon(graph: graph, file: name)
        try moon.makeDirectory("sub/deeper")
        return moon
    }

    @Test(arguments: ["moon.yaml", "moon.yml"])
    func fromASubdirectoryMoonRunsTheGraphAbove(_ name: String) throws {
        let moon = try tree(name: name)
        let result = try moon.run(["run", "where"], in: "sub/deeper")
        #expect(result.status == 0, "\(result.stderr)")
        // The node ran in the graph file's directory, not in the subdirectory.
        #expect(moon.read("ran-here") != nil, "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("sub/deeper/ran-here")))
        #expect(FileManager.default.fileExists(atPath: moon.path(".moon/state.db")))
    }

    /// Every command finds the same file, and history is that of the graph wherever it is asked from.
    @Test func everyCommandFindsTheGraphAbove() throws {
        let moon = try tree()
        #expect(try moon.run(["run"]).status == 0)
        let commands: [([String], String)] = [
            (["check"], "ok (2 nodes)"), (["list"], "lint"), (["graph", "lint"], "lint"), (["status", "where"], "where"),
            (["export", "--format", "sbatch", "lint"], "sbatch"), (["history"], "ok"), (["run", "-n"], "where"),
        ]
        for (arguments, expected) in commands {
            let result = try moon.run(arguments, in: "sub/deeper")
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains(expected), "\(arguments): \(result.stdout)")
        }
    }

    @Test func theNearestFileWins() throws {
        let moon = try tree()
        try moon.write("sub/moon.yml", "version: 1\nnodes:\n  inner: { run: \"echo inner graph\" }\n")
        let result = try moon.run(["run"], in: "sub/deeper")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("inner graph"), "\(result.stdout)")
        #expect(moon.read("ran-here") == nil)
    }

    /// An error in the found file names it by a path that works from where moon ran.
    @Test func errorsNameTheFoundFileFromHere() throws {
        let moon = try tree("version: 1\nnodes:\n  a: { needs: zz, run: true }\n")
        let result = try moon.run(["run"], in: "sub/deeper")
        #expect(result.status == 2)
        #expect(result.stderr.contains("../../moon.yaml:3:"), "\(result.stderr)")
    }

    /// FILE-or-NODE: a bare name is a node of the found file, also from below it.
    @Test func aBareNameIsANodeOfTheFoundFile() throws {
        let moon = try tree()
        try moon.write("sub/deeper/lint", "version: 1\nnodes:\n  x: { run: \"echo from-file\" }\n")
        let node = try moon.run(["run", "lint"], in: "sub/deeper")
        #expect(node.status == 0, "\(node.stderr)")
        #expect(node.stdout.contains("linting"), "\(node.stdout)")
        let file = try moon.run(["run", "./lint"], in: "sub/deeper")
        #expect(file.status == 0, "\(file.stderr)")
        #expect(file.stdout.contains("from-file"), "\(file.stdout)")
    }

    /// A moon.yaml in a directory owned by someone else (a shared /tmp) is
    /// not the user's graph: the search stops below it.
    // Only root can give a directory away; as another user the test shows as skipped.
    @Test(.enabled(if: getuid() == 0, "needs root, to give a directory to another user"))
    func theSearchStopsAtADirectoryOfAnotherUser() throws {
        let moon = try tree()
        #expect(chown(moon.path("sub"), 65534, 65534) == 0)
        let below = try moon.run(["run"], in: "sub/deeper")
        #expect(below.status == 2, "\(below.stdout)")
        #expect(below.stderr.contains("no moon.yaml or moon.yml"), "\(below.stderr)")
        #expect(moon.read("ran-here") == nil)
        // In that directory itself, its file is found but not read: its owner could change it (DiscoveryTrustTests).
        try moon.write("sub/moon.yaml", "version: 1\nnodes:\n  x: { run: \"echo theirs\" }\n")
        let inside = try moon.run(["run"], in: "sub")
        #expect(inside.status == 2 && inside.stderr.contains("its directory . is owned by nobody"), "\(inside.stderr)")
        #expect(try moon.run(["run", "moon.yaml"], in: "sub").stdout.contains("theirs"))
    }

    @Test func withoutAGraphAnywhereTheErrorSaysWhereItLooked() throws {
        let moon = try Moon()
        try moon.makeDirectory("a/b")
        let result = try moon.run(["run"], in: "a/b")
        #expect(result.status == 2)
        #expect(result.stderr.contains("no moon.yaml or moon.yml in \(moon.path("a/b")) or a directory above it"), "\(result.stderr)")
    }
}

@Suite struct DefaultTargetTests {
    static let graph = """
        version: 1
        nodes:
          build: { run: "touch built" }
          deploy: { description: ships it, needs: build, run: "touch deployed" }
        """

    /// The usage line is what a user types: `run` may be left out before a node.
    @Test func theUsageSaysWhatAUserTypesAndRunMayBeLeftOut() throws {
        let moon = try Moon(graph: Self.graph)
        let help = try moon.run(["--help"])
        #expect(help.stdout.contains("USAGE: moon [run] [FILE] [NODE [NAME=VALUE...]...] [-- ARGS...] [OPTIONS]"), "\(help.stdout)")
        #expect(help.stdout.contains("moon <subcommand> [ARGUMENTS] [OPTIONS]"), "\(help.stdout)")
        let build = try moon.run(["build", "--output", "plain"])
        #expect(build.status == 0 && build.stdout.contains("✓ build"), "\(build.stdout)\(build.stderr)")
        let dry = try moon.run(["-n", "build"])
        #expect(dry.status == 0 && dry.stdout.contains("dry run"), "\(dry.stdout)\(dry.stderr)")
        let unknown = try moon.run(["biuld"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown node 'biuld' (did you mean 'build'?)"), "\(unknown.stderr)")
        // A typo of a subcommand is read as a node, and the error names the subcommand.
        let typo = try moon.run(["chekc"])
        #expect(typo.status == 2 && typo.stderr.contains("moon's subcommand is 'check'"), "\(typo.stderr)")
    }

    /// Without `default:`, plain `moon` lists the nodes and runs nothing.
    @Test func plainMoonListsAndRunsNothing() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run([])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("deploy") && result.stdout.contains("ships it"), "\(result.stdout)")
        #expect(moon.read("built") == nil && moon.read("deployed") == nil)
    }

    /// With no graph file, plain `moon` is the help it always was.
    @Test func plainMoonWithoutAGraphPrintsHelp() throws {
        let moon = try Moon()
        let result = try moon.run([])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE: moon"), "\(result.stdout)")
    }

    @Test(arguments: [[], ["run"]])
    func withADefaultMoonRunsIt(_ arguments: [String]) throws {
        let moon = try Moon(graph: "version: 1\ndefault: build\n" + Self.graph.dropFirst("version: 1\n".count))
        let result = try moon.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(moon.read("built") != nil, "\(arguments): \(result.stdout)")
        #expect(moon.read("deployed") == nil, "\(arguments)")
    }

    /// Naming nodes overrides the default.
    @Test func namedNodesOverrideTheDefault() throws {
        let moon = try Moon(graph: "version: 1\ndefault: [build]\n" + Self.graph.dropFirst("version: 1\n".count))
        let result = try moon.run(["run", "deploy"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("deployed") != nil)
    }
}

@Suite struct PatternSelectionTests {
    static let graph = """
        version: 1
        nodes:
          lib-core: { run: "touch lib-core.done" }
          lib-util: { run: "touch lib-util.done" }
          app: { needs: [lib-core], run: "touch app.done" }
          test-unit: { run: "touch test-unit.done" }
          test-e2e: { run: "touch test-e2e.done" }
        """

    /// The same with `test` a fan-out: instances `test[unit]` and `test[e2e]`.
    static let instances = """
        version: 1
        nodes:
          app: { run: "touch app.done" }
          test:
            matrix: { suite: [unit, e2e] }
            run: "touch test-${{ matrix.suite }}.done"
        """

    @Test func aQuotedGlobSelectsTheNodesItMatches() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "lib-*"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("lib-core.done") != nil && moon.read("lib-util.done") != nil)
        #expect(moon.read("app.done") == nil)
    }

    @Test(arguments: [["test[*]"], ["test"], ["t*"]])
    func aGlobOrAFanOutsNameSelectsInstances(_ words: [String]) throws {
        let moon = try Moon(graph: Self.instances)
        let result = try moon.run(["run"] + words)
        #expect(result.status == 0, "\(words): \(result.stderr)")
        #expect(moon.read("test-unit.done") != nil && moon.read("test-e2e.done") != nil, "\(words)")
        #expect(moon.read("app.done") == nil)
    }

    /// An instance of a for-each over paths has a `/` in its name: it is a
    /// node, not FILE, first on the command line too.
    @Test func anInstanceWithASlashIsANodeNotAFile() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              obj:
                for-each: [src/a.c, src/b.c]
                run: "echo compiling ${{ item }}"
            """)
        for words in [["obj[src/a.c]"], ["obj[src/*]"], ["obj[*/a.c]"]] {
            let result = try moon.run(["run"] + words)
            #expect(result.status == 0, "\(words): \(result.stderr)")
            #expect(result.stdout.contains("compiling src/a.c"), "\(words): \(result.stdout)")
            #expect(result.stdout.contains("compiling src/b.c") == (words[0] == "obj[src/*]"), "\(words): \(result.stdout)")
        }
    }

    @Test func oneInstanceByNameOrPatternAndExcluded() throws {
        let moon = try Moon(graph: Self.instances)
        #expect(try moon.run(["run", "test[e*]"]).status == 0)
        #expect(moon.read("test-e2e.done") != nil && moon.read("test-unit.done") == nil)
        let other = try Moon(graph: Self.instances)
        let result = try other.run(["run", "test", "--exclude", "test[e2e]"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(other.read("test-unit.done") != nil && other.read("test-e2e.done") == nil)
        let typo = try other.run(["run", "tset[*]"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("no node matches 'tset[*]' (did you mean 'test[*]'?)"), "\(typo.stderr)")
    }

    @Test func excludeTakesNodesOutOfTheSelection() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "--exclude", "test-*", "--exclude=lib-util"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("app.done") != nil && moon.read("lib-core.done") != nil)
        #expect(moon.read("lib-util.done") == nil && moon.read("test-unit.done") == nil)
    }

    /// An excluded node that a selected node needs still runs, as a need
    /// always does; moon says so.
    @Test func anExcludedNeedStillRunsAndMoonSaysWhy() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "app", "--exclude", "lib-core"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("lib-core.done") != nil)
        #expect(result.stderr.contains("lib-core is excluded but runs: app needs it"), "\(result.stderr)")
    }

    @Test(arguments: [
        (["run", "tset-*"], "no node matches 'tset-*' (did you mean 'test-*'?)"),
        (["run", "lbi-*"], "no node matches 'lbi-*' (did you mean 'lib-*'?)"),
        (["run", "ap"], "unknown node 'ap' (did you mean 'app'?)"),
        (["run", "--exclude", "ap"], "--exclude 'ap' matches no node (did you mean 'app'?)"),
        (["graph", "tset*"], "no node matches 'tset*'"),
        (["status", "--exclude", "zz*"], "--exclude 'zz*' matches no node"),
    ])
    func aPatternThatMatchesNothingIsAnError(_ arguments: [String], _ message: String) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stdout)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    /// The other commands that take nodes take patterns too.
    @Test func graphAndStatusTakePatterns() throws {
        let moon = try Moon(graph: Self.graph)
        let graph = try moon.run(["graph", "lib-*", "--format", "json"])
        #expect(graph.status == 0, "\(graph.stderr)")
        #expect(graph.stdout.contains("lib-util") && !graph.stdout.contains("\"app\""), "\(graph.stdout)")
        let status = try moon.run(["status", "lib-*", "--exclude", "lib-core"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("lib-util") && !status.stdout.contains("lib-core"), "\(status.stdout)")
    }
}

@Suite struct InternalNodeTests {
    static let graph = """
        version: 1
        nodes:
          setup: { internal: true, run: "touch setup.done" }
          build: { needs: [setup], run: "touch build.done" }
          tidy: { internal: true, run: "touch tidy.done" }
        """

    @Test func anInternalNodeIsHiddenFromListButRunsWhenNeeded() throws {
        let moon = try Moon(graph: Self.graph)
        let list = try moon.run(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("build") && !list.stdout.contains("setup") && !list.stdout.contains("tidy"), "\(list.stdout)")
        let names = try moon.run(["list", "--names"])
        #expect(names.stdout == "build\n", "\(names.stdout)")
        let run = try moon.run(["run", "build"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(moon.read("setup.done") != nil && moon.read("build.done") != nil)
    }

    @Test func anInternalNodeIsNotSelectableByNameOrPattern() throws {
        let moon = try Moon(graph: Self.graph)
        let byName = try moon.run(["run", "setup"])
        #expect(byName.status == 2)
        #expect(byName.stderr.contains("'setup' is internal"), "\(byName.stderr)")
        let byPattern = try moon.run(["run", "*"])
        #expect(byPattern.status == 0, "\(byPattern.stderr)")
        #expect(moon.read("tidy.done") == nil, "an internal node nobody needs ran")
    }
}

@Suite struct ParameterTests {
    static let graph = """
        version: 1
        nodes:
          deploy:
            params:
              env: { default: staging }
              version: { required: true, description: the release to deploy }
            run: "echo deploying ${{ params.version }} to ${{ params.env }}"
          test:
            params: { suite: { default: unit } }
            run: "echo testing ${{ params.suite }} with ${{ args }}"
          build: { run: "true" }
        """

    @Test func nameEqualsValueAfterANodeSetsItsParameter() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "deploy", "env=prod", "version=1.4"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("deploying 1.4 to prod"), "\(result.stdout)")
        let defaulted = try moon.run(["run", "deploy", "version=2"])
        #expect(defaulted.stdout.contains("deploying 2 to staging"), "\(defaulted.stdout)")
    }

    @Test(arguments: [
        (["run", "deploy"], "node 'deploy' needs the parameter 'version' (the release to deploy)"),
        (["run", "deploy", "version=1", "evn=prod"], "node 'deploy' has no parameter 'evn' (did you mean 'env'?)"),
        (["run", "env=prod", "deploy"], "'env=prod' sets a parameter, so it comes after the node it is for"),
        (["run", "-n", "deploy"], "node 'deploy' needs the parameter 'version'"),
        (["run", "build", "x=1"], "node 'build' takes no parameters"),
        (["run", "moon.yaml", "--", "-x"], "name the node before '--'"),
    ])
    func aBadParameterIsExitTwo(_ arguments: [String], _ message: String) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stdout)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    /// The words after `--` are the last named node's `${{ args }}`, each one shell word.
    @Test func wordsAfterTheTerminatorAreTheLastNodesArgs() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "deploy", "version=1", "test", "suite=e2e", "--", "-k", "fast one; touch pwned"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("testing e2e with -k fast one; touch pwned"), "\(result.stdout)")
        #expect(moon.read("pwned") == nil)
        // Before any node, `--` only ends the options, as it always did.
        let file = try moon.run(["run", "--", "moon.yaml", "test"])
        #expect(file.status == 0, "\(file.stderr)")
    }

    /// Parameters and args are part of what a node ran: with sources, a
    /// change re-runs it and the same values again are up to date.
    @Test func parametersAndArgsAreInTheFingerprint() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              pack:
                params: { level: { default: "1" } }
                sources: [input.txt]
                run: "echo packed at ${{ params.level }} ${{ args }}"
            """)
        try moon.write("input.txt", "data")
        func ran(_ arguments: [String]) throws -> Bool {
            let result = try moon.run(["run", "pack"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.contains("packed at")
        }
        #expect(try ran([]))
        #expect(try !ran([]))
        #expect(try ran(["level=9"]))
        #expect(try !ran(["level=9"]))
        #expect(try ran(["level=9", "--", "-v"]))
        #expect(try !ran(["level=9", "--", "-v"]))
        // Every command that fingerprints or shows the node takes the same
        // words: what status and -n say is what that run would do.
        func status(_ arguments: [String]) throws -> String {
            let result = try moon.run(["status", "pack"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
        #expect(try status(["level=9", "--", "-v"]).contains("up to date"))
        #expect(try status(["level=9", "--", "-w"]).contains("command changed"))
        #expect(try status(["level=9"]).contains("command changed"))
        let dry = try moon.run(["run", "-n", "pack", "level=9", "--", "-v"])
        #expect(dry.stdout.contains("nothing to do"), "\(dry.stdout)\(dry.stderr)")
        let graph = try moon.run(["graph", "pack", "level=7", "--", "-q", "a b"])
        #expect(graph.status == 0, "\(graph.stderr)")
        #expect(graph.stdout.contains("echo packed at 7 -q 'a b'"), "\(graph.stdout)")
        // Before any node, `--` only ends the options, in every command.
        #expect(try moon.run(["status", "--", "moon.yaml"]).status == 0)
        let orphan = try moon.run(["status", "moon.yaml", "--", "-v"])
        #expect(orphan.status == 2 && orphan.stderr.contains("name the node before '--'"), "\(orphan.stderr)")
    }
}

/// Shell completion of node names, instances and parameters: the scripts
/// moon generates call moon back, and moon answers from the graph it finds.
@Suite struct CompletionTests {
    static let graph = """
        version: 1
        nodes:
          build: { run: "true" }
          setup: { internal: true, run: "true" }
          bench: { params: { rounds: { default: "3" } }, run: "true" }
          test:
            matrix: { suite: [unit, e2e] }
            run: "true"
        """

    @Test func listNamesPrintsSelectableNamesOnePerLine() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["list", "--names"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "build\nbench\ntest\ntest[unit]\ntest[e2e]\n", "\(result.stdout)")
        // The list shows a fan-out once, and each node's parameters.
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("test   (2 instances: test[unit], test[e2e])"), "\(list.stdout)")
        #expect(list.stdout.contains("bench  (params: rounds=3)"), "\(list.stdout)")
        #expect(!list.stdout.contains("setup"), "\(list.stdout)")
    }

    /// A large fan-out is one line of the list, named by its first and last instance.
    @Test func listShowsALargeFanOutOnOneLine() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              obj: { for-each: [a, b, c, d, e, f, g, h], run: "true" }
              link: { needs: [obj], run: "true" }
            """)
        let list = try moon.run(["list"])
        #expect(list.stdout == "obj   (8 instances: obj[a] … obj[h])\nlink  (needs: obj)\n", "\(list.stdout)")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func theGeneratedScriptsAskMoonForNodes(_ shell: String) throws {
        let moon = try Moon()
        let script = try moon.run(["--generate-completion-script", shell])
        #expect(script.status == 0, "\(script.stderr)")
        #expect(script.stdout.contains("---completion run -- positional@0"), "\(shell)")
    }

    /// The bash script itself, as bash runs it on TAB after `moon run b`, from a subdirectory.
    @Test func bashCompletesNodeNames() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  build: { run: \"true\" }\n  bench: { run: \"true\" }\n  test: { run: \"true\" }\n")
        try moon.makeDirectory("sub")
        try moon.write("moon.bash", try moon.run(["--generate-completion-script", "bash"]).stdout)
        let result = try shell("""
            cd sub && PATH="$(dirname "$MOON"):$PATH" && . ../moon.bash
            COMP_WORDS=(moon run b); COMP_CWORD=2; COMP_LINE="moon run b"; COMP_POINT=${#COMP_LINE}
            _moon; printf '%s\n' "${COMPREPLY[@]}"
            """, in: moon, bash: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "build\nbench\n", "\(result.stdout)\(result.stderr)")
    }

    /// As the scripts call moon: the words up to the cursor, the index of the last, the cursor in it.
    static func call(_ words: [String]) -> [String] {
        ["---completion", "run", "--", "positional@0", String(words.count - 1), String(words.last!.count)] + words
    }

    /// What the scripts run on TAB: names starting with the word, then a node's parameters.
    @Test func completingANodeAndItsParameters() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("sub")
        func complete(_ words: [String], in directory: String? = nil) throws -> [String] {
            let result = try moon.run(Self.call(words), environment: ["SAP_SHELL": "bash"], in: directory)
            #expect(result.status == 0, "\(words): \(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["moon", "run", "b"]) == ["build", "bench"])
        #expect(try complete(["moon", "run", "te"]) == ["test", "test[unit]", "test[e2e]"])
        #expect(try complete(["moon", "run", "bench", "r"]) == ["rounds="])
        #expect(try complete(["moon", "run", "bench", ""]) == ["build", "bench", "test", "test[unit]", "test[e2e]", "rounds="])
        // A FILE on the command line is the graph completed from.
        try moon.write("other.yaml", "version: 1\nnodes:\n  xray: { run: \"true\" }\n")
        #expect(try complete(["moon", "run", "other.yaml", "x"]) == ["xray"])
        #expect(try complete(["moon", "run", "test", "--", ""]) == [])
        // From a subdirectory, the graph above.
        #expect(try complete(["moon", "run", "bu"], in: "sub") == ["build"])
        // With no graph, nothing (and no error on the user's terminal).
        let empty = try Moon()
        let none = try empty.run(Self.call(["moon", "run", "b"]))
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.isEmpty, "\(none.stderr)")
    }

    /// fish's own completion (`complete -C`, as TAB runs it) with the script
    /// moon generates: node names, instances, parameters and their defaults.
    @Test(.enabled(if: onPath("fish") != nil, "fish is not installed (make test-deps, or apt-get install fish)"))
    func fishCompletesNodesInstancesAndParameters() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("sub")
        try moon.write("moon.fish", try moon.run(["--generate-completion-script", "fish"]).stdout)
        func complete(_ line: String, in directory: String = ".") throws -> [String] {
            let result = try shell(#"cd "$DIR" && PATH="$(dirname "$MOON"):$PATH" HOME="$PWD" fish --no-config -c 'source "$argv[1]"; complete -C "$argv[2]"' "$OLDPWD/moon.fish" "$LINE""#,
                                   in: moon, environment: ["LINE": line, "DIR": directory])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(line): \(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try complete("moon run b") == ["build", "bench"])
        #expect(try complete("moon run te") == ["test", "test[unit]", "test[e2e]"])
        #expect(try complete("moon run test[u") == ["test[unit]"])
        #expect(try complete("moon run bench r") == ["rounds="])
        #expect(try complete("moon run bench rounds=") == ["rounds=3"])
        #expect(try complete("moon status b") == ["build", "bench"])
        #expect(try complete("moon run bu", in: "sub") == ["build"])
    }

    /// zsh's completion system, in a real interactive zsh on a terminal
    /// (tmux), with the script moon generates loaded by compinit.
    @Test(.enabled(if: onPath("zsh") != nil && TmuxSession.available, "zsh or tmux is not installed (make test-deps)"))
    func zshCompletesNodesInstancesAndParameters() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("functions")
        try moon.write("functions/_moon", try moon.run(["--generate-completion-script", "zsh"]).stdout)
        let tmux = TmuxSession(in: moon)
        let bin = URL(fileURLWithPath: Moon.binary).deletingLastPathComponent().path
        spawnAndWait(TmuxSession.tmux!, ["-L", tmux.socket, "-f", "/dev/null", "new-session", "-d", "-x", "150", "-y", "30",
                                         "cd '\(moon.directory.path)' && env -i HOME='\(moon.directory.path)' TERM=xterm PATH='\(bin)':/usr/bin:/bin zsh -f"])
        func type(_ keys: [String], literal: Bool = false) {
            spawnAndWait(TmuxSession.tmux!, ["-L", tmux.socket, "send-keys"] + (literal ? ["-l"] : []) + keys)
        }
        type(["fpath=(functions $fpath); autoload -Uz compinit; compinit -u -D; PS1='%% '; print READY"], literal: true)
        type(["Enter"])
        #expect(tmux.waitFor { $0.contains("READY\n%") } != nil, "\(tmux.screen())")
        /// Whether the screen shows `expected` after typing `line` and TAB at an empty prompt.
        func completes(_ line: String, tabs: Int = 1, to expected: [String]) -> Bool {
            type(["C-u", "clear", "Enter"])
            _ = tmux.waitFor { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "%" }
            type([line], literal: true)
            for _ in 0..<tabs { type(["Tab"]) }
            return tmux.waitFor(10) { screen in expected.allSatisfy(screen.contains) } != nil
        }
        // Two matches are listed; one is completed on the line (quoted for zsh).
        #expect(completes("moon run b", to: ["build  bench"]), "\(tmux.screen())")
        // The first TAB completes what the names share, the second lists them.
        #expect(completes("moon run te", tabs: 2, to: ["test[unit]", "test[e2e]"]), "\(tmux.screen())")
        #expect(completes(#"moon run test\[u"#, to: [#"% moon run test\[unit\]"#]), "\(tmux.screen())")
        #expect(completes("moon run bench r", to: ["% moon run bench rounds="]), "\(tmux.screen())")
        #expect(completes("moon run bench rounds=", to: ["% moon run bench rounds=3"]), "\(tmux.screen())")
    }
}
