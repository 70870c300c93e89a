import MoonCommand
import MoonDocument
import Testing
@testable import MoonGraph

/// Decoding every key of DESIGN.md §2, and every error with its message and span.
/// Documents are built with `Y`; line 1 is `version: 1`, line 2 `nodes:`, line 3 the first node.
/// One file over 400 lines: every key of the format in one suite, in the order of DESIGN.md §2.
@Suite struct GraphDecoderTests {
    // MARK: - The whole example of DESIGN.md §2

    static let example: Y = [
        "version": 1,
        "name": "release",
        "description": "Build and ship",
        "vars": ["channel": "beta"],
        "env": ["LC_ALL": "C"],
        "queues": [
            "default": ["concurrency": "auto"],
            "net": ["concurrency": 4],
            "db": ["concurrency": 1],
            "cluster": ["executor": "slurm", "concurrency": 100, "slurm": ["partition": "debug"]],
        ],
        "defaults": ["queue": "default", "timeout": "10m", "retry": 0, "shell": "sh"],
        "nodes": [
            "fetch": [
                "description": "Download the data",
                "run": "curl -fsS \"$URL\" -o data.json",
                "env": ["URL": "https://example.org/data.json"],
                "queue": "net",
                "retry": ["times": 3, "delay": "1s", "backoff": 2],
                "timeout": "30s",
            ],
            "compile": ["run": ["swift", "build", "-c", "release"], "dir": "app"],
            "wait": ["uses": "sleep", "with": ["duration": "2s"]],
            "package": ["needs": ["fetch", "compile", "wait"], "run": "./package.sh"],
            "notify": ["needs": ["package"], "if": "always", "continue-on-error": true, "run": "./notify.sh"],
        ],
    ]

    @Test func decodesTheDesignExample() throws {
        let result = decode(Self.example, path: "ci/release.yaml")
        #expect(lines(result) == [])
        let g = try #require(result.graph)
        #expect(g.name == "release")
        #expect(g.description == "Build and ship")
        #expect(g.path == "ci/release.yaml")
        #expect(g.directory == "ci")
        #expect(g.vars.entries == [.init(name: "channel", value: "beta")])
        #expect(g.env["LC_ALL"] == "C")
        #expect(g.queues.map(\.name) == ["default", "net", "db", "cluster"])
        #expect(g.queues[0].concurrency == .auto)
        #expect(g.queues[1].concurrency == .fixed(4))
        #expect(g.queues[3].executor == .slurm(SlurmOptions(partition: "debug")))
        #expect(g.nodes.map(\.name) == ["fetch", "compile", "wait", "package", "notify"])

        let fetch = try #require(g["fetch"])
        #expect(fetch.description == "Download the data")
        #expect(fetch.action == .shell("curl -fsS \"$URL\" -o data.json"))
        #expect(fetch.env["URL"] == "https://example.org/data.json")
        #expect(g.queue(of: fetch).name == "net")
        #expect(fetch.retry == RetryPolicy(times: 3, delay: .seconds(1), backoff: 2))
        #expect(fetch.timeout == .seconds(30))
        #expect(fetch.nameSpan.start.line == 26 && fetch.nameSpan.start.column == 3)

        let compile = try #require(g["compile"])
        #expect(compile.action == .exec(["swift", "build", "-c", "release"]))
        #expect(compile.dir == "app")
        #expect(g.workingDirectory(for: compile) == "ci/app")
        #expect(compile.timeout == .seconds(600), "defaults.timeout applies")

        #expect(g["wait"]?.action == .builtin("sleep", with: ["duration": .duration(.seconds(2))]))

        let package = try #require(g["package"])
        #expect(package.needs == [0, 1, 2])

        let notify = try #require(g["notify"])
        #expect(notify.condition == .always)
        #expect(notify.continueOnError)
        #expect(g.index(of: "notify") == 4)
        #expect(g.environment(for: fetch).names == ["LC_ALL", "URL"])
    }

    @Test func nameDefaultsToTheFileStem() {
        #expect(graph(doc(["a": ["run": "x"]]), path: "dir/build.yml")?.name == "build")
        #expect(graph(doc(["a": ["run": "x"]]), path: "moon.yaml")?.directory == ".")
    }

    // MARK: - Top level

    @Test func topLevelMustBeAMapping() {
        #expect(lines(decode(["a", "b"])) == [
            "1:1: error: expected a mapping of graph settings (version, nodes, …) at the top of the file, found a list",
        ])
    }

    @Test func versionIsRequiredAndMustBeOne() {
        #expect(lines(decode(["nodes": ["a": ["run": "x"]]])) == [
            "1:1: error: missing 'version'; add 'version: 1' at the top of the file",
        ])
        #expect(lines(decode(["version": 2, "nodes": ["a": ["run": "x"]]])) == [
            "1:10: error: unsupported version '2'; this moon reads 'version: 1'",
        ])
        #expect(lines(decode(["version": ["x": 1], "nodes": ["a": ["run": "x"]]])) == [
            "2:3: error: expected 'version: 1', found a mapping",
        ])
    }

    @Test func nodesAreRequired() {
        #expect(lines(decode(["version": 1])) == [
            "1:1: error: missing 'nodes'; add a 'nodes:' mapping of node names to nodes",
        ])
        #expect(lines(decode(["version": 1, "nodes": ["a", "b"]])) == [
            "2:8: error: expected a mapping of node names to nodes, found a list",
        ])
        #expect(lines(decode(["version": 1, "nodes": .null])) == [
            "2:1: error: 'nodes' is empty; add at least one node",
        ])
        let empty = decode(["version": 1, "nodes": [:]])
        #expect(lines(empty) == ["2:8: warning: the graph has no nodes"])
        #expect(empty.graph?.nodes.isEmpty == true)
    }

    @Test func unknownTopLevelKeySuggestsAndListsValidKeys() throws {
        let result = decode(["version": 1, "nodez": [:], "nodes": ["a": ["run": "x"]]])
        #expect(lines(result) == ["2:1: error: unknown key 'nodez' at the top level (did you mean 'nodes'?)"])
        #expect(result.diagnostics[0].notes == ["valid keys: version, name, description, default, includes, vars, env, dotenv, queues, defaults, cache, secrets, nodes"])
    }

    @Test func xPrefixedTopLevelKeysAreIgnored() {
        let result = decode(["version": 1, "x-common": ["anything": ["goes"]], "nodes": ["a": ["run": "x"]]])
        #expect(lines(result) == [])
        #expect(result.graph != nil)
    }

    @Test func everyErrorIsReportedInSourceOrder() {
        let result = decode(doc([
            "a": ["rn": "x"],
            "b": ["run": "y", "needs": "zz"],
            "c": ["uses": "slep"],
        ]))
        #expect(lines(result) == [
            "3:3: error: node 'a' has nothing to do; add 'run' (a command) or 'uses' (a built-in)",
            "4:5: error: unknown key 'rn' in node 'a' (did you mean 'run'?)",
            "7:12: error: node 'b' needs unknown node 'zz'",
            "9:11: error: unknown built-in 'slep' (did you mean 'sleep'?)",
        ])
        #expect(result.graph == nil)
        #expect(result.diagnostics[3].notes == ["built-ins: sleep, echo, fail, write-file, exists, wait-for, reduce"])
        // No near name to suggest: the help says how to fix it.
        #expect(result.diagnostics[2].notes == ["help: add a node 'zz' under `nodes:`, or remove it from the needs of 'b'"])
    }

    // MARK: - Node names

    @Test func nodeNamesFollowTheRule() {
        let result = decode(doc(["ok_1.2+x-y": ["run": "x"], "-bad": ["run": "x"], "a b": ["run": "x"], "9": ["run": "x"]]))
        let rule = "names start with a letter, digit or '_' and contain only letters, digits, '_', '.', '+' and '-'"
        #expect(lines(result) == [
            "5:3: error: invalid node name '-bad'; \(rule)",
            "7:3: error: invalid node name 'a b'; \(rule)",
        ])
    }

    @Test func nodeBodyMustBeAMapping() {
        #expect(lines(decode(doc(["a": "echo hi"]))) == [
            "3:6: error: expected a mapping for node 'a' (with 'run' or 'uses'), found 'echo hi'",
        ])
        #expect(lines(decode(doc(["a": .null]))) == [
            "3:3: error: node 'a' has nothing to do; add 'run' (a command) or 'uses' (a built-in)",
        ])
    }

    // MARK: - run / uses

    @Test func runForms() throws {
        let g = try #require(graph(doc(["s": ["run": "make all"], "e": ["run": ["make", "all"]], "n": ["run": 42]])))
        #expect(g.nodes.map(\.action) == [.shell("make all"), .exec(["make", "all"]), .shell("42")])
    }

    @Test func runErrors() {
        #expect(lines(decode(doc(["a": ["run": ""]]))) == ["4:10: error: 'run' is empty; write the command to run"])
        #expect(lines(decode(doc(["a": ["run": .null]]))) == ["4:5: error: 'run' is empty; write the command to run"])
        #expect(lines(decode(doc(["a": ["run": []]]))) == [
            "4:10: error: 'run' is an empty list; give the program and its arguments, e.g. [make, all]",
        ])
        #expect(lines(decode(doc(["a": ["run": ["make", ["x": 1]]]]))) == [
            "6:9: error: expected a string (one argument), found a mapping",
        ])
        #expect(lines(decode(doc(["a": ["run": ["x": 1]]]))) == [
            "5:7: error: expected a command (a string, or a list of strings), found a mapping",
        ])
    }

    @Test func exactlyOneOfRunOrUses() {
        #expect(lines(decode(doc(["a": ["run": "x", "uses": "sleep", "with": ["duration": 1]]]))) == [
            "5:5: error: node 'a' has both 'run' and 'uses'; keep only one",
        ])
        #expect(lines(decode(doc(["a": ["description": "nothing"]]))) == [
            "3:3: error: node 'a' has nothing to do; add 'run' (a command) or 'uses' (a built-in)",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "with": ["message": "m"]]]))) == [
            "5:5: error: 'with' only applies to built-ins; remove it, or replace 'run' with 'uses'",
        ])
    }

    // MARK: - needs

    @Test func needsNameOrList() throws {
        let g = try #require(graph(doc(["a": ["run": "x"], "b": ["run": "x", "needs": "a"], "c": ["run": "x", "needs": ["a", "b"]]])))
        #expect(g.nodes.map(\.needs) == [[], [0], [0, 1]])
    }

    @Test func needsMayReferToLaterNodes() throws {
        let g = try #require(graph(doc(["b": ["run": "x", "needs": ["a"]], "a": ["run": "x"]])))
        #expect(g.nodes[0].needs == [1])
    }

    @Test func unknownNeedSuggestsTheClosestName() {
        let result = decode(doc(["build": ["run": "x"], "deploy": ["run": "x", "needs": ["biuld"]]]))
        #expect(lines(result) == [
            "7:13: error: node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)",
        ])
        #expect(result.diagnostics.first?.notes == [], "the suggestion is the help")
    }

    @Test func needsErrors() {
        #expect(lines(decode(doc(["a": ["run": "x", "needs": ["b": 1]]]))) == [
            "6:7: error: expected a list of node names, found a mapping",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "needs": ["a"]]]))) == [
            "5:13: error: node 'a' needs itself; remove 'a' from its needs",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "needs": [["b"]]]]))) == [
            "5:13: error: expected a node name, found a list",
        ])
    }

    @Test func duplicateNeedIsAWarning() throws {
        let result = decode(doc(["a": ["run": "x"], "b": ["run": "x", "needs": ["a", "a"]]]))
        #expect(lines(result) == ["7:16: warning: node 'b' needs 'a' more than once; remove the duplicate"])
        #expect(result.graph?.nodes[1].needs == [0])
    }

    // MARK: - if, continue-on-error, shell, dir, description, env

    @Test func conditionAndBooleans() {
        #expect(lines(decode(doc(["a": ["run": "x", "if": "sucess"]]))) == [
            "5:9: error: unknown condition 'sucess' (did you mean 'success'?); write one of 'success', 'failure', 'always'",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "continue-on-error": "yes"]]))) == [
            "5:24: error: expected true or false for 'continue-on-error', found 'yes'",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "continue-on-error": .quoted("true")]]))) == [
            "5:24: error: expected true or false for 'continue-on-error', found the string \"true\"",
        ])
    }

    @Test func shell() throws {
        #expect(graph(doc(["a": ["run": "x", "shell": "bash"]]))?.nodes[0].shell == .bash)
        #expect(lines(decode(doc(["a": ["run": "x", "shell": "zsh"]]))) == [
            "5:12: error: unknown shell 'zsh' (did you mean 'sh'?); write one of 'sh', 'bash'",
        ])
        #expect(lines(decode(doc(["a": ["run": ["x"], "shell": "bash"]]))) == [
            "5:5: warning: 'shell' only applies to a string 'run'; node 'a' does not use a shell",
        ])
    }

    @Test func envValuesAreScalars() throws {
        let g = try #require(graph(doc(["a": ["run": "x", "env": ["N": 3, "B": true, "S": "s"]]])))
        #expect(g.nodes[0].env.entries.map { "\($0.name)=\($0.value)" } == ["N=3", "B=true", "S=s"])
        #expect(lines(decode(doc(["a": ["run": "x", "env": ["L": ["a"], "1X": "y", "E": .null]]]))) == [
            "6:10: error: expected a string, number or boolean for environment variable 'L', found a list",
            "7:7: error: invalid environment variable name '1X'; names start with a letter or '_' and contain only letters, digits and '_'",
            "8:10: error: environment variable 'E' has no value; write '' for an empty string",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "env": ["a", "b"]]]))) == [
            "5:10: error: expected a mapping of environment variable names to values, found a list",
        ])
    }

    @Test func dirAndDescriptionAreStrings() {
        #expect(lines(decode(doc(["a": ["run": "x", "dir": ["a"], "description": ["k": "v"]]]))) == [
            "5:10: error: expected a directory, found a list",
            "7:7: error: expected a description, found a mapping",
        ])
    }

    @Test func expressionsAreKeptAsWritten() throws {
        let g = try #require(graph(doc(["a": ["run": "echo ${{ vars.channel }}", "env": ["C": "${{ vars.channel }}"]]],
                                       extra: [("vars", ["channel": "beta"])])))
        #expect(g.nodes[0].action == .shell("echo ${{ vars.channel }}"))
        #expect(g.nodes[0].env["C"] == "${{ vars.channel }}")
    }

    // MARK: - vars and overrides

    @Test func varsWithOverrides() throws {
        let document = doc(["a": ["run": "x"]], extra: [("vars", ["channel": "beta", "n": 2])])
        let g = try #require(graph(document, overrides: ["channel": "stable", "extra": "1", "another": "2"]))
        #expect(g.vars.entries.map { "\($0.name)=\($0.value)" } == ["channel=stable", "n=2", "another=2", "extra=1"])
        #expect(lines(decode(doc(["a": ["run": "x"]], extra: [("vars", ["v": ["x": 1]])]))) == [
            "4:5: error: expected a string, number or boolean, or a list of them for variable 'v', found a mapping",
        ])
    }

    // MARK: - timeout and retry

    @Test func timeouts() throws {
        let g = try #require(graph(doc([
            "a": ["run": "x", "timeout": "1m30s"],
            "b": ["run": "x", "timeout": 5],
            "c": ["run": "x", "timeout": "none"],
            "d": ["run": "x"],
        ], extra: [("defaults", ["timeout": "1h"])])))
        #expect(g.nodes.map(\.timeout) == [.seconds(90), .seconds(5), nil, .seconds(3600)])
        #expect(lines(decode(doc(["a": ["run": "x", "timeout": "5 min"]]))) == [
            "5:14: error: invalid duration '5 min'; write a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "timeout": 0]]))) == [
            "5:14: error: a timeout must be longer than 0s; remove it or write 'none' for no timeout",
        ])
    }

    @Test func retryForms() throws {
        let g = try #require(graph(doc([
            "a": ["run": "x", "retry": 3],
            "b": ["run": "x", "retry": ["times": 2, "delay": "500ms", "backoff": 1.5, "max-delay": "10s"]],
            "c": ["run": "x"],
        ])))
        #expect(g.nodes[0].retry == RetryPolicy(times: 3))
        #expect(g.nodes[1].retry == RetryPolicy(times: 2, delay: .milliseconds(500), backoff: 1.5, maxDelay: .seconds(10)))
        #expect(g.nodes[2].retry == .none)
    }

    @Test func retryErrors() {
        #expect(lines(decode(doc(["a": ["run": "x", "retry": -1]]))) == [
            "5:12: error: invalid retry '-1'; write a number of extra attempts (0 or more) or {times, delay, backoff, max-delay}",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "retry": ["delay": "1s", "backof": 2]]]))) == [
            "6:7: error: retry needs 'times' (the number of extra attempts)",
            "7:7: error: unknown key 'backof' in retry (did you mean 'backoff'?)",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "retry": ["times": 1, "backoff": 0.5, "delay": "soon"]]]))) == [
            "7:16: error: invalid backoff '0.5'; write a number of at least 1 (1 keeps the delay constant, 2 doubles it)",
            "8:14: error: invalid duration 'soon'; write a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds",
        ])
        #expect(lines(decode(doc(["a": ["run": "x", "retry": [1]]]))) == [
            "5:12: error: expected a number of retries or a mapping {times, delay, backoff, max-delay}, found a list",
        ])
    }

    // MARK: - queues

    @Test func defaultQueueAlwaysExistsAndComesFirst() throws {
        let g = try #require(graph(doc(["a": ["run": "x"]], extra: [("queues", ["net": ["concurrency": 2], "default": ["concurrency": 3]])])))
        #expect(g.queues.map(\.name) == ["default", "net"])
        #expect(g.queues[0].concurrency == .fixed(3))
        #expect(g.nodes[0].queue == 0)
        #expect(graph(doc(["a": ["run": "x"]]))?.queues == [QueueSpec(name: "default")])
    }

    @Test func unknownQueueSuggests() throws {
        let result = decode(doc(["a": ["run": "x", "queue": "nett"]], extra: [("queues", ["net": ["concurrency": 2]])]))
        #expect(lines(result) == ["8:12: error: node 'a' uses unknown queue 'nett' (did you mean 'net'?)"])
        #expect(result.diagnostics[0].notes == ["queues: default, net; declare new ones under 'queues:'"])
    }

    @Test func queueErrors() {
        #expect(lines(decode(doc(["a": ["run": "x"]], extra: [("queues", [
            "q0": ["concurrency": 0],
            "q1": ["concurrency": .quoted("4")],
            "q2": ["executor": "slrum"],
            "q3": ["concurency": 2],
            "q4": ["slurm": ["partition": "p"]],
        ])]))) == [
            "4:18: error: invalid concurrency '0' for queue 'q0'; write a positive integer or 'auto'",
            "6:18: error: invalid concurrency the string \"4\" for queue 'q1'; write a positive integer or 'auto'",
            "8:15: error: unknown executor 'slrum' (did you mean 'slurm'?); write one of 'local', 'slurm'",
            "10:5: error: unknown key 'concurency' in queue 'q3' (did you mean 'concurrency'?)",
            "12:5: error: queue 'q4' has 'slurm' options but no 'executor: slurm'; add it",
        ])
    }

    // MARK: - slurm

    @Test func slurmOptionsLayer() throws {
        let g = try #require(graph(doc(
            ["a": ["run": "x", "queue": "hpc", "slurm": ["cpus-per-task": 8, "mem": "16G", "args": ["--exclusive"]]]],
            extra: [("queues", ["hpc": ["executor": "slurm", "slurm": [
                "partition": "debug", "cpus-per-task": 2, "mem": "4G", "time": "1:00:00", "account": "lab", "args": ["--qos=low"],
            ]]])])))
        let options = try #require(g.slurmOptions(for: g.nodes[0]))
        #expect(options == SlurmOptions(partition: "debug", cpusPerTask: 8, mem: "16G", time: "1:00:00", account: "lab",
                                        args: ["--qos=low", "--exclusive"]))
        #expect(options.summary == "partition=debug cpus-per-task=8 mem=16G time=1:00:00 account=lab args=--qos=low --exclusive")
    }

    @Test func slurmErrors() {
        #expect(lines(decode(doc(["a": ["run": "x", "slurm": ["partiton": "p", "cpus-per-task": 0, "mem": "lots", "time": "soon"]]]))) == [
            "5:5: warning: node 'a' has 'slurm' options but its queue 'default' runs locally; they are ignored",
            "6:7: error: unknown key 'partiton' in slurm options (did you mean 'partition'?)",
            "7:22: error: invalid cpus-per-task '0'; write a positive integer",
            "8:12: error: invalid mem 'lots'; write an amount like 4G, 512M or 1000 (megabytes)",
            "9:13: error: invalid time 'soon'; write a duration (30m, 1h30m), minutes (30), hours:minutes:seconds (1:00:00) or days-hours:minutes:seconds (1-00:00:00)",
        ])
    }

    @Test func slurmTimeAndMemoryForms() {
        for good in ["30", "30:00", "1:00:00", "2-0", "2-12:00", "2-12:00:00", "UNLIMITED"] {
            #expect(SlurmOptions.isValidTime(good), "\(good)")
        }
        for bad in ["", "1h", "1:2:3:4", "-1", "a-1", "1-", "1--2"] {
            #expect(!SlurmOptions.isValidTime(bad), "\(bad)")
        }
        #expect(SlurmOptions.isValidMemory("4G") && SlurmOptions.isValidMemory("1000") && !SlurmOptions.isValidMemory("G"))
    }

    // MARK: - defaults

    @Test func defaultsApplyUnlessTheNodeSetsItsOwn() throws {
        let g = try #require(graph(doc([
            "a": ["run": "x"],
            "b": ["run": "x", "queue": "default", "retry": 1, "shell": "sh", "timeout": "2s", "dir": "b",
                  "continue-on-error": false, "if": "success"],
        ], extra: [
            ("queues", ["net": ["concurrency": 2]]),
            ("defaults", ["queue": "net", "timeout": "10m", "retry": ["times": 2, "delay": "1s"], "shell": "bash",
                          "dir": "work", "continue-on-error": true, "if": "always"]),
        ])))
        let a = g.nodes[0], b = g.nodes[1]
        #expect(g.queue(of: a).name == "net" && a.timeout == .seconds(600) && a.retry == RetryPolicy(times: 2, delay: .seconds(1)))
        #expect(a.shell == .bash && a.dir == "work" && a.continueOnError && a.condition == .always)
        #expect(g.queue(of: b).name == "default" && b.timeout == .seconds(2) && b.retry == RetryPolicy(times: 1))
        #expect(b.shell == .sh && b.dir == "b" && !b.continueOnError && b.condition == .success)
        #expect(g.defaults.queue == 1)
    }

    @Test func defaultsErrors() {
        #expect(lines(decode(doc(["a": ["run": "x"]], extra: [("defaults", ["queue": "nope", "shel": "sh"])]))) == [
            "3:10: error: defaults uses unknown queue 'nope'",
            "4:3: error: unknown key 'shel' in defaults (did you mean 'shell'?)",
        ])
    }

    // MARK: - Strict keys in nodes

    @Test(.enabled(if: loaderWorks, "needs the YAML loader"))
    func depfileIsAPathRelativeToTheNodesDir() throws {
        let text = """
            version: 1
            vars: { d: x }
            nodes:
              ok: { sources: a.c, depfile: build/a.d, dir: sub, run: cc }
              expr: { sources: a.c, depfile: "${{ vars.d }}.d", run: cc }
              empty: { sources: a.c, depfile: "", run: cc }
              dirExpr: { sources: a.c, dir: "${{ vars.d }}", depfile: a.d, run: cc }
              alone: { depfile: a.d, run: cc }
            """
        let result = load(text)
        #expect(lines(result) == [
            "6:35: error: an empty 'depfile'; write the path the command writes, such as build/main.d",
            "7:50: error: 'depfile' is read relative to 'dir', which uses expressions here; write 'dir' as it is",
            "8:12: warning: 'depfile' only matters with 'sources'; node 'alone' always runs",
        ])
        let valid = load("version: 1\nnodes:\n  ok: { sources: a.c, depfile: build/a.d, dir: sub, run: cc }\n")
        #expect(valid.graph?.nodes[0].depfile == "build/a.d")
        // A depfile is a path read before the node runs: vars are put into it.
        let withVar = load("version: 1\nvars: { d: x }\nnodes:\n  e: { sources: a.c, depfile: \"${{ vars.d }}.d\", run: cc }\n")
        #expect(withVar.graph?.nodes[0].depfile == "x.d")
    }

    @Test func unknownNodeKeysSuggest() throws {
        let result = decode(doc(["a": ["run": "x", "need": ["b"], "timout": "1s", "continue_on_error": true, "zzz": 1], "b": ["run": "y"]]))
        #expect(lines(result) == [
            "5:5: error: unknown key 'need' in node 'a' (did you mean 'needs'?)",
            "6:5: error: unknown key 'timout' in node 'a' (did you mean 'timeout'?)",
            "7:5: error: unknown key 'continue_on_error' in node 'a' (did you mean 'continue-on-error'?)",
            "8:5: error: unknown key 'zzz' in node 'a'",
        ])
        #expect(result.diagnostics[3].notes == [
            "valid keys: description, needs, run, uses, with, env, dir, queue, timeout, retry, if, continue-on-error, priority, success-codes, shell, slurm, resources, sources, generates, depfile, cache, for-each, matrix, params, internal, service, restart, interactive, confirm",
        ])
    }

    @Test func duplicateKeysInTreesAreErrorsToo() {
        // The loader rejects duplicate keys in files; trees built another way are checked here.
        #expect(lines(decode(doc(.map([("a", ["run": "x"]), ("a", ["run": "y"])])))) == [
            "5:3: error: node 'a' is defined twice; rename or remove one",
        ])
    }
}
