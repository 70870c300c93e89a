import Foundation
import Testing

/// The C compiler and archiver the example builds with.
private let cToolsPresent = ["cc", "ar"].allSatisfy { tool in
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
}

/// examples/c-project, a real C program, built by the built moon as a make
/// or ninja user would build it, one object per source file through
/// `for-each` over a glob: a copy of the example in a fresh directory
/// compiles, links and passes its own tests; nothing runs again until a
/// file changes, and then only what the change reaches (`depfile:` headers,
/// early cutoff on an object rebuilt byte for byte).
@Suite(.enabled(if: cToolsPresent, "needs cc and ar on PATH (make test-deps installs gcc)"))
struct CProjectExampleTests {
    static let example = Moon.root.appendingPathComponent("examples/c-project")

    /// The instances of `obj` and `check`, in the glob's (sorted) order.
    static let objects = ["ast", "error", "eval", "format", "lexer", "parser", "symtab"].map { "obj[src/\($0).c]" }
    static let tests = ["arith", "errors", "functions", "vars"].map { "check[tests/\($0).in]" }

    static func objects(_ names: String...) -> [String] { objects.filter { o in names.contains { o == "obj[src/\($0).c]" } } }
    static let nodes = objects + ["libcalc.a", "calc"] + tests + ["test"]

    /// A copy of the example, without what a build in the repository may
    /// have left there, its files dated an hour ago as in a checked-out
    /// tree: a header that the first build's depfile lists and that was
    /// written within 100 ms before its object's check counts as unknown,
    /// so a build right after the copy would compile those objects again.
    func project() throws -> Moon {
        let moon = try Moon()
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.example.path)
        where !["build", ".moon"].contains(name) {
            try FileManager.default.copyItem(at: Self.example.appendingPathComponent(name),
                                             to: moon.directory.appendingPathComponent(name))
        }
        let past = Date().addingTimeInterval(-3600)
        for case let name as String in FileManager.default.enumerator(atPath: moon.directory.path) ?? .init() {
            try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: moon.path(name))
        }
        return moon
    }

    /// Runs moon with `--json` and returns each node's outcome: "ran", "up-to-date", "failed", or "?".
    func run(_ moon: Moon, _ arguments: [String] = [], in directory: String? = nil,
             expecting status: Int32 = 0) throws -> [String: String] {
        let result = try moon.run(["run", "--json"] + arguments, in: directory)
        #expect(result.status == status, "moon run \(arguments): \(result.stdout)\(result.stderr)")
        var outcomes: [String: String] = [:]
        for node in Self.nodes {
            let outcome = result.outcome(node)
            outcomes[node] = outcome == "?" && !result.events("error", node: node).isEmpty ? "failed" : outcome
        }
        return outcomes
    }

    /// The nodes whose outcome is `outcome`, in the graph's order.
    func nodes(_ outcomes: [String: String], _ outcome: String) -> [String] {
        Self.nodes.filter { outcomes[$0] == outcome }
    }

    /// A clean build: every node runs and every test passes.
    func build(_ moon: Moon) throws {
        let outcomes = try run(moon)
        #expect(nodes(outcomes, "ran") == Self.nodes, "\(outcomes)")
        #expect(FileManager.default.isExecutableFile(atPath: moon.path("build/calc")))
    }

    /// Replaces `old` with `new` in a file of the copy (an editor's save).
    func edit(_ moon: Moon, _ name: String, _ old: String, _ new: String) throws {
        let text = try #require(moon.read(name))
        #expect(text.contains(old), "\(name) no longer contains \(old)")
        try moon.write(name, text.replacingOccurrences(of: old, with: new))
    }

    @Test func buildsPassesItsTestsAndThenHasNothingToDo() throws {
        let moon = try project()
        try build(moon)
        #expect(moon.read("build/tests/errors.actual")?.hasSuffix("ok = 42\n43\nexit 1\n") == true)

        // A no-op, under every spelling of the graph file and from a subdirectory.
        for (arguments, directory) in [([], nil), (["moon.yaml", "test"], nil), ([moon.path("moon.yaml")], nil),
                                       (["../moon.yaml"], "src"), (["../moon.yaml", "calc"], "tests")] as [([String], String?)] {
            let outcomes = try run(moon, arguments, in: directory)
            let selected = arguments.count > 1 ? Self.nodes.filter { outcomes[$0] != "?" } : Self.nodes
            #expect(!selected.isEmpty && nodes(outcomes, "up-to-date") == selected,
                    "moon run \(arguments) in \(directory ?? "."): \(outcomes)")
        }
        let dry = try moon.run(["run", "-n"])
        #expect(dry.stdout == "dry run: graph c-project, nothing to do: all \(Self.nodes.count) nodes are up to date\n",
                "\(dry.stdout)\(dry.stderr)")
        let fromSubdirectory = try moon.run(["run", "-n", "../moon.yaml"], in: "src")
        #expect(fromSubdirectory.stdout.contains("nothing to do"), "\(fromSubdirectory.stdout)")
        let status = try moon.run(["status"])
        #expect(status.stdout.split(separator: "\n").allSatisfy { $0.hasSuffix("up to date") }, "\(status.stdout)")
    }

    /// symtab.h is included by symtab.c, eval.c and main.c (eval.c through
    /// eval.h); calc.h by every file but symtab.c and format.c. main.c is
    /// compiled with the link, by `calc`.
    @Test func aHeaderEditRerunsOnlyTheObjectsThatIncludeIt() throws {
        let moon = try project()
        try build(moon)

        try edit(moon, "include/symtab.h", "#define SYMTAB_MAX 64", "#define SYMTAB_MAX 128")
        let status = try moon.run(["status"]).stdout
        let lines = status.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("obj[src/symtab.c]") && $0.hasSuffix("runs: include/symtab.h changed") }, "\(status)")
        #expect(lines.contains { $0.hasPrefix("obj[src/lexer.c]") && $0.hasSuffix("up to date") }, "\(status)")
        var outcomes = try run(moon)
        #expect(nodes(outcomes, "ran") == Self.objects("eval", "symtab") + ["libcalc.a", "calc"] + Self.tests, "\(outcomes)")
        // `test` gathers the tests: they ran and passed again, and its own sources did not change.
        #expect(nodes(outcomes, "up-to-date") == Self.objects("ast", "error", "format", "lexer", "parser") + ["test"],
                "\(outcomes)")

        try edit(moon, "include/calc.h", "char message[128];", "char message[160];")
        outcomes = try run(moon)
        #expect(nodes(outcomes, "ran").filter { $0.hasPrefix("obj[") } == Self.objects("ast", "error", "eval", "lexer", "parser"),
                "\(outcomes)")
        #expect(nodes(outcomes, "up-to-date") == Self.objects("format", "symtab") + ["test"], "\(outcomes)")
        #expect(outcomes["libcalc.a"] == "ran" && outcomes["calc"] == "ran", "\(outcomes)")

        #expect(nodes(try run(moon), "up-to-date") == Self.nodes)
    }

    /// A comment edit reruns the object, and gcc writes the same bytes
    /// (no -g, and the comment keeps the line count), so the archive, the
    /// link and the tests are up to date.
    @Test func aCommentEditStopsAtTheObject() throws {
        let moon = try project()
        try build(moon)
        let before = FileManager.default.contents(atPath: moon.path("build/format.o"))

        try edit(moon, "src/format.c", "#include <math.h>", "#include <math.h> /* isnan, isinf */")
        let outcomes = try run(moon)
        #expect(FileManager.default.contents(atPath: moon.path("build/format.o")) == before,
                "the compiler no longer writes the same object for a comment edit")
        #expect(nodes(outcomes, "ran") == Self.objects("format"), "\(outcomes)")
        #expect(nodes(outcomes, "up-to-date") == Self.nodes.filter { $0 != "obj[src/format.c]" }, "\(outcomes)")
        #expect(nodes(try run(moon), "up-to-date") == Self.nodes)
    }

    /// A change to the code of one source file compiles that one object
    /// again; the archive, the link and the tests follow, and every other
    /// object is up to date. A new source file is a new instance.
    @Test func oneEditRebuildsOneObject() throws {
        let moon = try project()
        try build(moon)

        try edit(moon, "src/lexer.c", "#include \"lexer.h\"", "#include \"lexer.h\"\nint calc_lexer_edits = 1;")
        let outcomes = try run(moon)
        #expect(nodes(outcomes, "ran") == Self.objects("lexer") + ["libcalc.a", "calc"] + Self.tests, "\(outcomes)")
        #expect(nodes(outcomes, "up-to-date") == Self.objects.filter { $0 != "obj[src/lexer.c]" } + ["test"], "\(outcomes)")

        try moon.write("src/extra.c", "int calc_extra(void) { return 1; }\n")
        let added = try moon.run(["run", "--json"])
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        #expect(added.outcome("obj[src/extra.c]") == "ran", "\(added.stdout)")
        #expect(added.outcome("obj[src/lexer.c]") == "up-to-date", "\(added.stdout)")
        #expect(FileManager.default.fileExists(atPath: moon.path("build/extra.o")))
    }

    /// The tests are real: a wrong expectation fails its node and the run,
    /// with the diff in the output; fixing it reruns only that test. A new
    /// CFLAGS (through --set) rebuilds and tests again.
    @Test func aFailingTestFailsTheRunAndFlagsRebuild() throws {
        let moon = try project()
        try build(moon)

        try edit(moon, "tests/arith.expected", "\n512\n", "\n64\n")
        let failed = try moon.run(["run"])
        #expect(failed.status == 1)
        #expect(failed.stdout.contains("-64") && failed.stdout.contains("+512"), "\(failed.stdout)")
        try edit(moon, "tests/arith.expected", "\n64\n", "\n512\n")
        var outcomes = try run(moon)
        // `test` did not run in the failed run (its need failed), and its
        // sources are as they were at its last success: its cache entry
        // of that success comes back.
        #expect(nodes(outcomes, "ran") == [], "\(outcomes)")
        #expect(nodes(outcomes, "cache-hit") == ["check[tests/arith.in]"], "\(outcomes)")

        // The flags are in the graph's env, which every node's fingerprint holds.
        outcomes = try run(moon, ["--set", "CFLAGS=-O0 -std=c11"])
        #expect(nodes(outcomes, "ran") == Self.nodes, "\(outcomes)")
        #expect(nodes(try run(moon, ["--set", "CFLAGS=-O0 -std=c11"]), "up-to-date") == Self.nodes)
    }
}
