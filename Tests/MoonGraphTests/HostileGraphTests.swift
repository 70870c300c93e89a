import Foundation
import MoonDocument
import Testing
@testable import MoonGraph

/// Small graph files that would grow without bound after YAML loading
/// (includes that repeat files, vars that repeat vars), and strings moon
/// cannot pass to the system: each one an error at its place, at once.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct HostileGraphTests {
    func load(_ text: String, files: [String: String] = [:]) -> GraphLoadResult {
        GraphLoader.load(SourceFile(path: "moon.yaml", text: text), files: FanOutTests.fake(files))
    }

    func errors(_ result: GraphLoadResult) -> [String] {
        result.errors.map { "\($0.span.map { "\($0.file):\($0.start.line):\($0.start.column): " } ?? "")\($0.message)" }
    }

    /// dI includes dI+1 twice: 2^41 files to read, stopped at the budget.
    static func diamond(levels: Int) -> [String: String] {
        var files: [String: String] = [:]
        for i in 0...levels {
            let includes = i < levels ? "includes: { x: d\(i + 1).yaml, y: d\(i + 1).yaml }\n" : ""
            files["d\(i).yaml"] = "version: 1\n\(includes)nodes:\n  n: { run: 'true' }\n"
        }
        return files
    }

    /// 30 levels: within the nesting depth, so that only the budget speaks.
    @Test func anIncludeDiamondStopsAtTheIncludeBudget() throws {
        let files = Self.diamond(levels: 30)
        let started = Date()
        let result = load(files["d0.yaml"]!, files: files)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result.graph == nil)
        let found = errors(result)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains(": includes read more than \(ExpansionLimit.includedFiles) files") == true, "\(found)")
        #expect(found.first?.hasPrefix("d") == true, "at an include: \(found)")
        #expect(result.errors.first?.notes.contains { $0.hasPrefix("help:") } == true)
    }

    @Test func includesUnderTheBudgetStillLoad() throws {
        let files = Self.diamond(levels: 6)
        let result = load(files["d0.yaml"]!, files: files)
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.nodes.count == 127)
    }

    /// A file of many nodes included many times, at a tenth of the scale
    /// (the bound is the budget's: the same code as at 1,000,000).
    @Test func nodesMergedFromIncludesAreBudgeted() throws {
        let big = "version: 1\nnodes:\n" + (0..<1_000).map { "  n\($0): { run: 'true' }\n" }.joined()
        var includes = ""
        for i in 0..<100 { includes += "  i\(i): big.yaml\n" }
        let text = "version: 1\nincludes:\n\(includes)nodes:\n  a: { run: 'true' }\n"
        let source = SourceFile(path: "moon.yaml", text: text)
        let root = try YAMLLoader.load(source)
        let result = GraphLoader.decode(root, path: "moon.yaml", source: source, files: FanOutTests.fake(["big.yaml": big]),
                                        budget: ExpansionBudget(maxNodes: 10_000))
        #expect(result.graph == nil)
        let found = errors(result)
        #expect(found == ["moon.yaml:12:7: the graph has more than 10000 nodes once includes are merged"], "\(found)")
        #expect(ExpansionBudget().maxNodes == ExpansionLimit.nodes)
    }

    @Test func aDoublingVarStopsAtTheVarCapWhileExpanding() throws {
        var text = "version: 1\nvars:\n  v0: xxxxxxxxxx\n"
        for i in 1...30 { text += "  v\(i): \"${{ vars.v\(i - 1) }}${{ vars.v\(i - 1) }}\"\n" }
        text += "nodes:\n  a: { run: 'echo ${{ vars.v30 }}' }\n"
        let started = Date()
        let result = load(text)
        #expect(Date().timeIntervalSince(started) < 10)
        let found = errors(result)
        #expect(found.count == 1, "\(found)")
        // 10 · 2^17 bytes is past 1 MiB: v17 is the first too long.
        #expect(found.first?.hasPrefix("moon.yaml:20:3: var 'v17' is longer than 1 MiB") == true, "\(found)")
    }

    @Test func aDoublingListVarStopsAtTheItemCap() throws {
        var text = "version: 1\nvars:\n  v0: [x]\n"
        for i in 1...40 { text += "  v\(i): [\"${{ vars.v\(i - 1) }}\", \"${{ vars.v\(i - 1) }}\"]\n" }
        text += "nodes:\n  a: { run: 'echo ${{ vars.v40 }}' }\n"
        let result = load(text)
        let found = errors(result)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains("var 'v17' has more than \(ExpansionLimit.varItems) items") == true, "\(found)")
    }

    @Test func manyLongVarsShareOneBudget() throws {
        let long = String(repeating: "x", count: 100_000)
        var text = "version: 1\nvars:\n  v0: \(long)\n"
        for i in 1...1_000 { text += "  w\(i): \"y${{ vars.v0 }}\"\n" }
        text += "nodes:\n  a: { run: 'true' }\n"
        let found = errors(load(text))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains("the vars of this graph are longer than 64 MiB in all") == true, "\(found)")
    }

    @Test(arguments: ["sources: [\"${{ vars.v }}${{ vars.v }}\"]", "depfile: \"${{ item }}${{ item }}\""])
    func aPathRepeatingALongValueIsAnErrorBeforeItIsMade(field: String) throws {
        let long = String(repeating: "x", count: 600_000)
        let found = errors(load("version: 1\nvars: { v: \(long) }\nnodes:\n  a:\n    for-each: [\(long)]\n    \(field)\n    run: 'true'\n"))
        #expect(found == ["moon.yaml:4:3: a path of node 'a[\(long)]' (sources, generates or depfile) is longer than 1 MiB once vars, item and matrix are put in"],
                "\(found.map { $0.prefix(200) })")
    }

    @Test func varsUnderTheCapStillExpand() throws {
        var text = "version: 1\nvars:\n  v0: xxxxxxxxxx\n"
        for i in 1...10 { text += "  v\(i): \"${{ vars.v\(i - 1) }}${{ vars.v\(i - 1) }}\"\n" }
        text += "nodes:\n  a: { run: 'true' }\n"
        let result = load(text)
        let graph = try #require(result.graph, "\(errors(result))")
        #expect(graph.vars["v10"]?.utf8.count == 10 << 10)
    }

    // MARK: NUL

    @Test(arguments: [
        ("{ run: \"echo a\\0b\" }", 3, 13),
        ("{ run: [echo, \"a\\0b\"] }", 3, 20),
        ("{ uses: exists, with: { path: \"/etc\\0/nonexist\" } }", 3, 36),
        ("{ run: 'true', dir: \"a\\x00b\" }", 3, 26),
        ("{ uses: write-file, with: { path: \"victim\\u0000.txt\", content: x } }", 3, 40),
        ("{ run: 'true', env: { \"K\\0\": v } }", 3, 28),
    ])
    func aNULInAnyStringIsAnErrorAtLoad(node: String, line: Int, column: Int) throws {
        let result = load("version: 1\nnodes:\n  a: \(node)\n")
        let found = errors(result)
        #expect(result.graph == nil)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix("moon.yaml:\(line):\(column): a NUL character cannot") == true, "\(found)")
    }

    @Test func aNULInAVarIsAnErrorAtLoad() throws {
        let result = load("version: 1\nvars:\n  v: \"a\\0b\"\nnodes:\n  a: { run: 'echo ${{ vars.v }}' }\n")
        #expect(errors(result).first?.hasPrefix("moon.yaml:3:6: a NUL character cannot") == true, "\(errors(result))")
    }

    @Test func aNULInAnIncludedFileIsAnErrorInThatFile() throws {
        let result = load("version: 1\nincludes: { lib: lib.yaml }\nnodes:\n  a: { run: 'true' }\n",
                          files: ["lib.yaml": "version: 1\nnodes:\n  b: { run: \"x\\0\" }\n"])
        #expect(errors(result).first?.hasPrefix("lib.yaml:3:13: a NUL character cannot") == true, "\(errors(result))")
    }

    // MARK: Messages that say what to write

    @Test func aMatrixKeyWithoutValuesSaysSo() throws {
        let found = errors(load("version: 1\nnodes:\n  a:\n    matrix: { x: [] }\n    run: 'true'\n"))
        #expect(found == ["moon.yaml:4:18: matrix key 'x' has no values; give it at least one"], "\(found)")
    }

    @Test func aBareContextSaysWhatToWrite() throws {
        let found = errors(load("version: 1\nnodes:\n  b: { run: 'true' }\n  a: { needs: b, run: 'echo ${{ needs }}' }\n"))
        #expect(found.count == 1 && found[0].contains("'needs' alone is not a value; write needs.NODE.outputs.KEY or needs.NODE.result"), "\(found)")
    }

    @Test func aByteOrderMarkStartingADotenvFileIsSkipped() {
        let (values, problems) = Dotenv.parse([0xEF, 0xBB, 0xBF] + Array("A=1\nB=2\n".utf8))
        #expect(problems == [])
        #expect(values.names == ["A", "B"])
    }
}
