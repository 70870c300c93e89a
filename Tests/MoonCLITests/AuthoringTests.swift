import Foundation
import MoonEvents
import Testing

/// The graph file language of real projects, end to end: `for-each` and
/// `matrix` instances, list vars, vars that use vars, groups, `default:`,
/// `internal:`, `params:` and `includes:`.
@Suite struct AuthoringTests {
    private func directory(_ moon: Moon, _ path: String) throws {
        try moon.makeDirectory(path)
    }

    private func lines(_ text: String?) -> [String] {
        (text ?? "").split(separator: "\n").map(String.init).sorted()
    }

    @Test func forEachOverAListRunsOneInstancePerItemWithTheItemAsData() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              greet:
                for-each: [alpha, "two words", "$(touch PWNED)"]
                run: printf '<%s>\\n' ${{ item }} >> out.txt
              exec:
                for-each: [x, "y z"]
                run: [sh, -c, 'printf "[%s]\\n" "$1" >> exec.txt', sh, "${{ item }}"]
              after:
                needs: [greet, exec]
                run: echo done >> out.txt
            """)
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lines(moon.read("out.txt")) == ["<$(touch PWNED)>", "<alpha>", "<two words>", "done"])
        #expect(moon.read("out.txt")?.hasSuffix("done\n") == true, "after waits for every instance")
        #expect(lines(moon.read("exec.txt")) == ["[x]", "[y z]"])
        #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED")))
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("greet[alpha]"))
        #expect(list.stdout.contains("greet[two words]"))
    }

    @Test func forEachOverAGlobWithExcludeAndTheItemsParts() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              obj:
                for-each: { glob: "src/*.c", exclude: [src/main.c] }
                sources: ["${{ item }}"]
                generates: ["build/${{ item.stem }}.o"]
                run: mkdir -p build && echo ${{ item.name }} ${{ item.stem }} ${{ item.ext }} ${{ item.dir }} > build/${{ item.stem }}.o
              one:
                needs: ["obj[src/b.c]"]
                run: cat build/b.o > one.txt
            """)
        try directory(moon, "src")
        for name in ["a.c", "b.c", "main.c"] { try moon.write("src/\(name)", "int x;\n") }
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("build/a.o") == "a.c a .c src\n")
        #expect(moon.read("one.txt") == "b.c b .c src\n")
        #expect(moon.read("build/main.o") == nil)
        // Each instance has its own fingerprint: the second run skips them all.
        let again = try moon.run(["run", "--json"])
        #expect(again.status == 0)
        #expect(again.events("skip").count == 2, "\(again.stdout)")
        #expect(again.events("skip", node: "obj[src/a.c]").first?.reason == .upToDate)
    }

    @Test func aGlobThatMatchesNothingIsAnErrorUnlessAllowEmpty() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              obj:
                for-each: { glob: "src/*.c" }
                run: echo ${{ item }}
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:4:23: error: the glob 'src/*.c' matches no file"), "\(result.stderr)")
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              obj:
                for-each: { glob: "src/*.c", allow-empty: true }
                run: echo ${{ item }}
              all:
                needs: [obj]
            """)
        let empty = try moon.run(["run"])
        #expect(empty.status == 0, "\(empty.stderr)")
    }

    @Test func aMatrixRunsEveryCombinationWithIncludeAndExclude() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              test:
                matrix:
                  suite: [unit, e2e]
                  opt: [O0, O2]
                  exclude: [{ suite: e2e, opt: O0 }]
                  include: [{ suite: smoke, opt: O1 }]
                run: echo ${{ matrix.suite }}-${{ matrix.opt }} >> out.txt
            """)
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lines(moon.read("out.txt")) == ["e2e-O2", "smoke-O1", "unit-O0", "unit-O2"])
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("test[unit,O2]"))
        #expect(list.stdout.contains("test[smoke,O1]"))
    }

    @Test func checkNamesEveryMisuseOfFanOutAndParams() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              plain:
                run: echo ${{ item }}
              cells:
                matrix: { os: [linux] }
                run: echo ${{ matrix.oss }}
              both:
                for-each: [a]
                matrix: { x: [1] }
                run: "true"
              one:
                needs: ["cells[mac]"]
                run: echo ${{ params.nope }}
              dyn:
                for-each: ${{ needs.plain.outputs.files }}
                run: echo ${{ item }}
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        let err = result.stderr
        #expect(err.contains("moon.yaml:4:15: error: 'item' is only available in a node with 'for-each'"), "\(err)")
        #expect(err.contains("moon.yaml:7:15: error: unknown matrix key 'oss' (did you mean 'os'?)"), "\(err)")
        #expect(err.contains("moon.yaml:10:5: error: node 'both' has both 'for-each' and 'matrix'"), "\(err)")
        #expect(err.contains("moon.yaml:13:13: error: node 'one' needs unknown node 'cells[mac]'"), "\(err)")
        #expect(err.contains("cells[linux]"), "the instances that exist are named: \(err)")
        #expect(err.contains("moon.yaml:14:15: error: undeclared parameter 'nope'"), "\(err)")
        #expect(err.contains("moon.yaml:16:15: error: node 'dyn' fans out over 'plain', which is not one of its needs"), "\(err)")
    }

    @Test func listVarsAreOneWordPerItemAndVarsUseVarsInAnyOrder() throws {
        let moon = try Moon(graph: """
            version: 1
            vars:
              CFLAGS: [-O2, "two words", "$(touch PWNED)", "${{ vars.MODE }}"]
              OUT: build/${{ vars.MODE }}
              MODE: release
            nodes:
              shell:
                run: printf '<%s>' ${{ vars.CFLAGS }} ${{ vars.OUT }} > shell.txt
              exec:
                run: [printf, "<%s>", "${{ vars.CFLAGS }}", "x${{ vars.CFLAGS }}"]
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("shell.txt") == "<-O2><two words><$(touch PWNED)><release><build/release>")
        let printed = result.events("next", node: "exec").compactMap { $0.text }.joined()
        #expect(printed == "<-O2><two words><$(touch PWNED)><release><x-O2 two words $(touch PWNED) release>", "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED")))
    }

    /// What `moon run -n` and `moon graph` show of a node is what would
    /// run: each instance's item and matrix values, list vars, params and
    /// args put in, shell-quoted as the shell would receive them.
    @Test func theDryRunAndTheGraphShowEachInstancesResolvedCommand() throws {
        let moon = try Moon(graph: """
            version: 1
            vars:
              CFLAGS: [-O2, "-DX=a b"]
            nodes:
              obj:
                for-each: [a.c, "my file.c", "it's.c"]
                run: cc ${{ vars.CFLAGS }} -c ${{ item }} -o "${{ item.stem }}.o" && echo '${{ item.name }}'
              ex:
                for-each: ["x y"]
                run: [echo, "${{ item }}", "${{ vars.CFLAGS }}", "-D${{ item }}"]
              test:
                matrix: { suite: [unit, e2e] }
                run: "./t --suite ${{ matrix.suite }} # ${{ matrix.suite }} stays"
              deploy:
                params:
                  env: { default: staging }
                  version: { required: true }
                run: ./deploy.sh --env ${{ params.env }} --version ${{ params.version }} ${{ args }} "$HOME"
            """)
        let dry = try moon.run(["run", "-n", "deploy", "version=1.4", "obj", "ex", "test", "--", "-k", "a b"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let expected = [
            "obj[a.c]": #"cc -O2 '-DX=a b' -c a.c -o "a.o" && echo 'a.c'"#,
            "obj[my file.c]": #"cc -O2 '-DX=a b' -c 'my file.c' -o "my file.o" && echo 'my file.c'"#,
            "obj[it's.c]": #"cc -O2 '-DX=a b' -c 'it'\''s.c' -o "it's.o" && echo 'it'\''s.c'"#,
            "ex[x y]": #"echo 'x y' -O2 '-DX=a b' '-Dx y'"#,
            "test[unit]": "./t --suite unit # ${{ matrix.suite }} stays",
            "test[e2e]": "./t --suite e2e # ${{ matrix.suite }} stays",
        ]
        for (node, command) in expected {
            #expect(dry.stdout.split(separator: "\n").contains { $0.contains(node) && $0.hasSuffix(command) }, "\(node): \(dry.stdout)")
        }
        // The words after -- are the last node's (test's), so deploy gets none.
        #expect(dry.stdout.contains(#"./deploy.sh --env staging --version 1.4 "$HOME""#), "\(dry.stdout)")
        let args = try moon.run(["run", "-n", "deploy", "version=1.4", "--", "-k", "a b"])
        #expect(args.stdout.contains(#"./deploy.sh --env staging --version 1.4 -k 'a b' "$HOME""#), "\(args.stdout)")
        // moon graph shows the same; a required parameter not given stays as written.
        let graph = try moon.run(["graph"])
        #expect(graph.stdout.contains(#"cc -O2 '-DX=a b' -c 'my file.c' -o "my file.o""#), "\(graph.stdout)")
        #expect(graph.stdout.contains("--version ${{ params.version }}"), "\(graph.stdout)")
        let json = try moon.run(["graph", "--format", "json", "ex"])
        #expect(json.stdout.contains(#""instance": {"#) && json.stdout.contains(#""item": "x y""#), "\(json.stdout)")
    }

    /// A list var an includer sets stays a list in the included file: one word per item.
    @Test func aListVarSetByTheIncluderStaysAList() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              lib: { file: lib/moon.yaml, vars: { CFLAGS: [-O0, "-g", "two words"] } }
            nodes:
              all: { needs: ["lib:cc", "lib:exec"] }
            """)
        try directory(moon, "lib")
        try moon.write("lib/moon.yaml", """
            version: 1
            vars:
              CFLAGS: [-O2]
            nodes:
              cc:
                run: printf '<%s>' ${{ vars.CFLAGS }} > flags.txt
              exec:
                run: [printf, "<%s>", "${{ vars.CFLAGS }}"]
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("lib/flags.txt") == "<-O0><-g><two words>", "\(moon.read("lib/flags.txt") ?? "")")
        let printed = result.events("next", node: "lib:exec").compactMap { $0.text }.joined()
        #expect(printed == "<-O0><-g><two words>", "\(result.stdout)")
    }

    /// A file included twice has each copy's errors quoted with its line:
    /// errors the copies share are reported once, those they do not, each.
    @Test func everyErrorOfAFileIncludedTwiceQuotesItsLine() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              a: { file: lib/moon.yaml, vars: { DIR: one } }
              b: { file: ./lib/../lib/moon.yaml, vars: { DIR: two } }
              c: common.yaml
            nodes:
              top: { run: "true" }
            """)
        try directory(moon, "lib")
        try moon.write("lib/moon.yaml", """
            version: 1
            includes:
              k: ../common.yaml
            vars:
              DIR: src
            nodes:
              obj:
                for-each: { glob: "${{ vars.DIR }}/*.c" }
                run: cc -c ${{ item }}
            """)
        try moon.write("common.yaml", """
            version: 1
            nodes:
              x: { run: "echo ${{ vars.NOPE }}" }
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        for (header, line) in [("lib/moon.yaml:8:23: error: the glob 'one/*.c' matches no file", #"8 |     for-each: { glob: "${{ vars.DIR }}/*.c" }"#),
                               ("lib/moon.yaml:8:23: error: the glob 'two/*.c' matches no file", #"8 |     for-each: { glob: "${{ vars.DIR }}/*.c" }"#),
                               ("common.yaml:3:19: error: undeclared var 'NOPE'", #"3 |   x: { run: "echo ${{ vars.NOPE }}" }"#)] {
            let block = result.stderr.components(separatedBy: header).dropFirst().first ?? ""
            #expect(block.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().first?.hasSuffix(line) == true,
                    "\(header): \(result.stderr)")
        }
        #expect(result.stderr.components(separatedBy: "undeclared var 'NOPE'").count == 2, "once: \(result.stderr)")
    }

    @Test func aCycleOfVarsIsNamedWhereItStarts() throws {
        let moon = try Moon(graph: """
            version: 1
            vars:
              A: x${{ vars.B }}
              B: ${{ vars.A }}y
            nodes:
              n:
                run: echo ${{ vars.A }}
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:3:3: error: vars use each other in a cycle: A -> B -> A"), "\(result.stderr)")
    }

    @Test func defaultGroupsAndInternalNodes() throws {
        let moon = try Moon(graph: """
            version: 1
            default: all
            nodes:
              setup:
                internal: true
                run: echo setup >> out.txt
              build:
                needs: [setup]
                run: echo build >> out.txt
              other:
                run: echo other >> out.txt
              all:
                description: everything that ships
                needs: [build]
            """)
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("out.txt") == "setup\nbuild\n")
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("all"))
        #expect(!list.stdout.split(separator: "\n").contains { $0.hasPrefix("setup") }, "internal nodes are not listed: \(list.stdout)")
        let bad = try Moon(graph: """
            version: 1
            default: [al]
            nodes:
              all: { run: "true" }
            """)
        let check = try bad.run(["check"])
        #expect(check.status == 2)
        #expect(check.stderr.contains("moon.yaml:2:11: error: default names unknown node 'al' (did you mean 'all'?)"), "\(check.stderr)")
    }

    @Test func paramsTakeTheirDefaultsAndArgsAreEmptyWithoutTheCommandLine() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              deploy:
                params:
                  env: { default: staging }
                  tag: { default: "a b" }
                run: printf '<%s>' ${{ params.env }} ${{ params.tag }} ${{ args }} > out.txt
            """)
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("out.txt") == "<staging><a b>")
    }

    @Test func includesNamespaceNodesAndKeepTheirPathsAndErrors() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              lib: lib/moon.yaml
              dbg: { file: lib/moon.yaml, vars: { MODE: debug } }
            nodes:
              app:
                needs: [lib:core, dbg:core]
                run: cat lib/core-release.txt lib/core-debug.txt > app.txt
            """)
        try directory(moon, "lib")
        try moon.write("lib/moon.yaml", """
            version: 1
            vars:
              MODE: release
            nodes:
              core:
                sources: [core.c]
                generates: ["core-${{ vars.MODE }}.txt"]
                run: cat core.c > core-${{ vars.MODE }}.txt
            """)
        try moon.write("lib/core.c", "core\n")
        let result = try moon.run(["run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(moon.read("app.txt") == "core\ncore\n")
        let list = try moon.run(["list"])
        #expect(list.stdout.contains("lib:core") && list.stdout.contains("dbg:core"))
        // Every command sees the whole graph, included nodes and their state too.
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("lib:core") && status.stdout.contains("up to date"), "\(status.stdout)")
        let graph = try moon.run(["graph"])
        #expect(graph.stdout.contains("dbg:core"), "\(graph.stdout)")

        try moon.write("lib/moon.yaml", """
            version: 1
            nodes:
              core:
                needs: [nope]
                run: "true"
            """)
        let broken = try moon.run(["check"])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("""
            lib/moon.yaml:4:13: error: node 'core' needs unknown node 'nope'
                4 |     needs: [nope]
                  |             ^~~~
            """), "the included file's line is quoted: \(broken.stderr)")

        try moon.write("lib/moon.yaml", """
            version: 1
            includes:
              up: ../moon.yaml
            nodes:
              core: { run: "true" }
            """)
        let cycle = try moon.run(["check"])
        #expect(cycle.status == 2)
        #expect(cycle.stderr.contains("include cycle: moon.yaml -> lib/moon.yaml -> moon.yaml"), "\(cycle.stderr)")
    }
}
