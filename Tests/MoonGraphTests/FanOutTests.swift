import Foundation
import MoonDocument
import Testing
@testable import MoonGraph

/// The graph file language of fan-out, parameters and includes, through the
/// real loader with a fake file system (`GraphFileAccess`).
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct FanOutTests {
    /// A file system of `files` (path -> text); a glob lists the paths under
    /// the directory whose names fit `*` in the pattern's last segment.
    static func fake(_ files: [String: String]) -> GraphFileAccess {
        GraphFileAccess(
            read: { path in
                files[path].map { .success(Array($0.utf8)) } ?? .failure(.init("\(path): no such file"))
            },
            glob: { directory, pattern, exclude in
                let prefix = directory == "." ? "" : directory + "/"
                return GraphFileAccess.GlobMatches(files: files.keys.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
                    .filter { NamePattern.matches(pattern, $0) && !exclude.contains($0) }.sorted())
            })
    }

    func load(_ text: String, files: [String: String] = [:], overrides: [String: String] = [:]) -> GraphLoadResult {
        GraphLoader.load(SourceFile(path: "moon.yaml", text: text), overrides: overrides, files: Self.fake(files))
    }

    func errors(_ result: GraphLoadResult) -> [String] {
        result.errors.map { "\($0.span.map { "\($0.file):\($0.start.line):\($0.start.column): " } ?? "")\($0.message)" }
    }

    @Test func itemPartsOfPaths() {
        #expect(ItemPart.name.of("src/lib/a.tar.gz") == "a.tar.gz")
        #expect(ItemPart.stem.of("src/lib/a.tar.gz") == "a.tar")
        #expect(ItemPart.ext.of("src/lib/a.tar.gz") == ".gz")
        #expect(ItemPart.dir.of("src/lib/a.tar.gz") == "src/lib")
        #expect(ItemPart.dir.of("a.c") == ".")
        #expect(ItemPart.stem.of(".hidden") == ".hidden")
        #expect(ItemPart.ext.of(".hidden") == "")
        #expect(ItemPart.whole.of("x y") == "x y")
        #expect(ItemPart.dir.of("/a.c") == "/")
        #expect(ItemPart.name.of("src/") == "")
        #expect(ItemPart.stem.of("données/été.tar.gz") == "été.tar")
        #expect(ItemPart.ext.of("données/été.çà") == ".çà")
        #expect(ItemPart.dir.of("données/été.c") == "données")
        #expect(ItemPart.stem.of("a.b/c") == "c")
    }

    @Test func namePatternsTreatBracketsAsThemselves() {
        #expect(NamePattern.matches("test[*]", "test[unit,O2]"))
        #expect(!NamePattern.matches("test[*]", "tests"))
        #expect(NamePattern.matches("lib:*", "lib:core"))
        #expect(NamePattern.matches("*:core", "a:b:core"))
        #expect(NamePattern.matches("n?", "n1"))
        #expect(!NamePattern.matches("n?", "n12"))
    }

    @Test func globInstancesGetTheirPathsAndNeedsPointAtThem() throws {
        let result = load("""
            version: 1
            vars: { OUT: build }
            nodes:
              obj:
                for-each: { glob: "src/*.c", exclude: [src/main.c] }
                sources: ["${{ item }}"]
                generates: ["${{ vars.OUT }}/${{ item.stem }}.o"]
                depfile: "${{ vars.OUT }}/${{ item.stem }}.d"
                run: cc -c ${{ item }}
              link:
                needs: [obj]
                run: cc *.o
              one:
                needs: ["obj[src/b.c]"]
                run: "true"
            """, files: ["src/a.c": "", "src/b.c": "", "src/main.c": ""])
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.nodes.map(\.name) == ["obj[src/a.c]", "obj[src/b.c]", "link", "one"])
        #expect(graph.nodes[0].sources == ["src/a.c"])
        #expect(graph.nodes[0].generates == ["build/a.o"])
        #expect(graph.nodes[0].depfile == "build/a.d")
        #expect(graph.nodes[0].instance == NodeInstance(template: "obj", label: "src/a.c", item: "src/a.c"))
        #expect(graph.nodes[0].action == .shell("cc -c ${{ item }}"), "run keeps its expression: the Interpolator resolves it")
        #expect(graph.nodes[2].needs == [0, 1])
        #expect(graph.nodes[3].needs == [1])
        #expect(graph.instances(of: "obj") == [0, 1])
        #expect(graph.targets(named: "obj") == [0, 1])
        #expect(try graph.targets(for: "obj[*]") == [0, 1])
    }

    @Test func matrixCombinationsFollowGitHubActions() throws {
        let result = load("""
            version: 1
            nodes:
              t:
                matrix:
                  os: [linux, mac]
                  v: [1, 2]
                  exclude: [{ os: mac, v: 1 }]
                  include: [{ os: linux, extra: x }, { os: bsd, v: 3 }]
                run: echo ${{ matrix.os }} ${{ matrix.extra }}
            """)
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.nodes.map(\.name) == ["t[linux,1,x]", "t[linux,2,x]", "t[mac,2]", "t[bsd,3]"])
        #expect(graph.nodes[0].instance?.matrix["extra"] == "x")
    }

    /// A fan-out makes at most `FanOutLimit.instances` instances: a few lines
    /// of matrix must not ask for millions of nodes (and all the memory).
    @Test func aFanOutBeyondTheLimitIsAnErrorAtItsPlace() {
        func matrix(_ keys: Int) -> String {
            let values = (0..<keys).map { "k\($0): [0,1,2,3,4,5,6,7,8,9]" }.joined(separator: ", ")
            return "version: 1\nnodes:\n  a:\n    matrix: { \(values) }\n    run: echo\n"
        }
        let big = load(matrix(7))
        #expect(errors(big) == ["moon.yaml:4:13: the matrix of 'a' has 10000000 combinations; a node fans out to at most 100000 instances"], "\(errors(big))")
        #expect(big.errors.first?.notes.first?.hasPrefix("help: ") == true)
        // A product past Int's range is the same error, not a trap.
        #expect(errors(load(matrix(20))).first?.contains("more than 100000 combinations") == true, "\(errors(load(matrix(20))))")
        #expect(load(matrix(5)).errors.isEmpty)

        let many = (0...FanOutLimit.instances).map { "src/f\($0).c" }
        let globbed = load("version: 1\nnodes:\n  c:\n    for-each: { glob: 'src/*.c' }\n    run: cc ${{ item }}\n",
                           files: Dictionary(uniqueKeysWithValues: many.map { ($0, "") }))
        #expect(errors(globbed) == ["moon.yaml:4:23: the glob 'src/*.c' matches 100001 files; a node fans out to at most 100000 instances"], "\(errors(globbed))")
    }

    @Test func misusesAreErrorsWithTheirPlace() {
        let result = load("""
            version: 1
            nodes:
              a:
                for-each: [x, x]
                run: echo ${{ item.base }}
              b:
                for-each: { glob: "none/*" }
                run: echo
              c:
                run: echo ${{ matrix.k }} ${{ params.p }} ${{ args }}
                params: { q: { required: true, default: 1 } }
              d:
                sources: ["${{ needs.c.result }}"]
                needs: [c]
                run: echo
            """)
        let found = errors(result)
        #expect(found.contains { $0.hasPrefix("moon.yaml:4:19: 'a' has the instance 'a[x]' twice") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:5:15: unknown part 'base' of item") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:7:23: the glob 'none/*' matches no file") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:10:15: 'matrix' is only available in a node with 'matrix'") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:10:31: undeclared parameter 'p'") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:11:36: parameter 'q' is required and has a default") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:13:16: 'sources' is read before the node runs") }, "\(found)")
    }

    @Test func dynamicForEachStaysOneNodeWithItsNeedAndKey() throws {
        let result = load("""
            version: 1
            nodes:
              shards: { run: "echo" }
              process:
                needs: [shards]
                for-each: ${{ needs.shards.outputs.files }}
                run: wc -l ${{ item }}
            """)
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.nodes[1].name == "process")
        #expect(graph.nodes[1].fanOut == DynamicFanOut(need: 0, key: "files"))
        let expanded = graph.nodes[1].instantiated(NodeInstance(template: "process", label: "a.txt", item: "a.txt"), vars: graph.vars)
        #expect(expanded.name == "process[a.txt]")
        #expect(expanded.fanOut == nil)
    }

    @Test func varsUseVarsAndListsSplice() throws {
        let result = load("""
            version: 1
            vars:
              ALL: ["${{ vars.BASE }}", -g]
              BASE: [-O2, -Wall]
              OUT: build/${{ vars.MODE }}
              MODE: release
            nodes:
              n: { run: "true" }
            """, overrides: ["MODE": "${{ vars.OUT }}"])
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.vars.items("ALL") == ["-O2", "-Wall", "-g"])
        #expect(graph.vars["OUT"] == "build/${{ vars.OUT }}", "a --set value is taken as it is")
    }

    @Test func bindChecksParameters() throws {
        let result = load("""
            version: 1
            nodes:
              deploy:
                params:
                  env: { default: staging }
                  version: { required: true, description: the release to deploy }
                run: ./deploy ${{ params.env }} ${{ params.version }}
              plain: { run: "true" }
            """)
        var graph = try #require(result.graph, "\(errors(result))")
        #expect(throws: ArgumentError.self) { try graph.bind(node: 0, params: ["evn": "prod", "version": "1"]) }
        do {
            try graph.bind(node: 0, params: ["evn": "prod", "version": "1"])
        } catch {
            #expect(error.message.contains("did you mean 'env'?"))
        }
        do {
            try graph.bind(node: 0, params: [:])
        } catch {
            #expect(error.message.contains("the release to deploy"))
        }
        #expect(throws: ArgumentError.self) { try graph.bind(node: 1, params: ["x": "1"]) }
        try graph.bind(node: 0, params: ["version": "1.4"], args: ["-k", "fast"])
        #expect(graph.nodes[0].arguments == NodeArguments(params: ["env": "staging", "version": "1.4"], args: ["-k", "fast"]))
    }

    @Test func includesAreNamespacedWithTheirOwnVarsAndPaths() throws {
        let result = load("""
            version: 1
            default: [app]
            includes:
              lib: lib/moon.yaml
            nodes:
              app:
                needs: [lib:core, "lib:obj"]
                run: echo ${{ needs.lib:core.outputs.x }}
            """, files: [
                "lib/moon.yaml": """
                version: 1
                vars: { MODE: release }
                includes:
                  sub: sub/moon.yaml
                nodes:
                  core: { needs: [sub:leaf], sources: [core.c], run: "echo ${{ vars.MODE }} ${{ needs.sub:leaf.result }}" }
                  obj: { for-each: [a, b], run: "echo ${{ item }}" }
                """,
                "lib/sub/moon.yaml": "version: 1\nnodes:\n  leaf: { run: \"true\" }\n",
            ])
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.nodes.map(\.name) == ["lib:sub:leaf", "lib:core", "lib:obj[a]", "lib:obj[b]", "app"])
        let core = graph.nodes[1]
        #expect(core.dir == "lib")
        #expect(core.sources == ["lib/core.c"])
        #expect(core.namespace == "lib:")
        #expect(core.vars?["MODE"] == "release")
        #expect(core.needs == [0])
        #expect(graph.nodes[0].dir == "lib/sub")
        #expect(graph.nodes[4].needs == [1, 2, 3])
        #expect(graph.instances(of: "lib:obj") == [2, 3])
        #expect(graph.defaultTargets == ["app"])
    }

    @Test func includeErrorsPointIntoTheIncludedFile() {
        let result = load("""
            version: 1
            includes:
              lib: lib/moon.yaml
              gone: nowhere.yaml
            nodes:
              app: { run: "true" }
            """, files: ["lib/moon.yaml": "version: 1\nincludes: { back: ../moon.yaml }\nnodes:\n  core: { needs: [nope], run: x }\n"])
        let found = errors(result)
        #expect(found.contains { $0.hasPrefix("lib/moon.yaml:4:19: node 'core' needs unknown node 'nope'") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("lib/moon.yaml:2:19: include cycle: moon.yaml -> lib/moon.yaml -> moon.yaml") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("moon.yaml:4:9: cannot read include 'gone'") }, "\(found)")
    }

    /// What a listing shows: each value quoted for where it stands, the
    /// instance's values and the bound arguments put in, the rest as written.
    @Test func aCommandPreviewQuotesEachValueForItsContext() throws {
        let result = load(#"""
            version: 1
            vars: { L: [a, "b c"], EMPTY: [], NL: "l1\nl2" }
            nodes:
              n:
                for-each: ["x'y", "$d"]
                run: f ${{ item }} '${{ item }}' "${{ item }}" ${{ vars.L }} ${{ vars.EMPTY }} x${{ vars.L }} ${{ env.HOME }}
              m:
                run: g ${{ vars.NL }} '${{ vars.NL }}' "${{ vars.NL }}"
              s: { run: "true" }
              e:
                needs: [s]
                params: { p: { default: "v w" }, q: { required: true } }
                run: [prog, "${{ params.p }}", "${{ params.q }}", "${{ args }}", "${{ needs.s.outputs.k }}"]
            """#)
        var graph = try #require(result.graph, "\(errors(result))")
        let names = graph.nodes.map(\.name)
        func shown(_ name: String) -> String {
            var preview = CommandPreview(graph: graph)
            return preview.command(of: graph.nodes[names.firstIndex(of: name)!])
        }
        #expect(shown("n[x'y]") == #"f 'x'\''y' 'x'\''y' "x'y" a 'b c' xa 'b c' ${{ env.HOME }}"#)
        #expect(shown("n[$d]") == #"f '$d' '$d' "\$d" a 'b c' xa 'b c' ${{ env.HOME }}"#)
        #expect(shown("m") == #"g $'l1\nl2' ''$'l1\nl2''' ""$'l1\nl2'"""#)
        #expect(shown("e") == "prog 'v w' '${{ params.q }}' '${{ needs.s.outputs.k }}'")
        try graph.bind(node: names.firstIndex(of: "e")!, params: ["q": "1"], args: ["-k", "a b"])
        #expect(shown("e") == "prog 'v w' 1 -k 'a b' '${{ needs.s.outputs.k }}'")
    }
}
