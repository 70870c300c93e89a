import Foundation
import Testing

/// `moon run` reads a usual command line itself (`EarlyGraph`: the parser's
/// reflection was ~1.1 ms of every start) and loads its graph file at once;
/// swift-argument-parser reads anything else. A wrong reading must only
/// cost time: these tests check that the usual command lines are read right
/// (`MOON_DEBUG_EARLY=1` says whether the early load was used, and compares
/// the quick reading with the parser's) and that the result is the same
/// either way.
@Suite struct EarlyLoadTests {
    static let graph = """
        version: 1
        vars: { greeting: hello }
        nodes:
          a: { run: "echo ${{ vars.greeting }}" }
          b: { needs: a, run: "echo b" }
        """

    func run(_ moon: Moon, _ arguments: [String]) throws -> Moon.Result {
        try moon.run(arguments, environment: ["MOON_DEBUG_EARLY": "1"])
    }

    @Test(arguments: [
        ["run"],
        ["run", "moon.yaml"],
        ["run", "-j", "2", "--output", "plain", "-q", "moon.yaml"],
        ["run", "-j2", "moon.yaml", "a"],
        ["run", "--jobs=3", "-kq", "--set", "greeting=hi", "moon.yaml"],
        ["run", "--set=greeting=hi", "--timeout", "1m", "--grace", "1s", "--color", "never", "a"],
        ["run", "--output-mode", "grouped", "--stall-after", "1s", "-B", "--json"],
        ["run", "-n"],
        ["run", "--", "moon.yaml"],
        ["run", "--output=json", "-vB", "--set", "greeting=a", "--set", "greeting=b", "moon.yaml", "b", "a"],
        ["run", "a", "--keep-going", "--dry-run", "--force", "--quiet", "--color=always", "--output-mode=prefixed"],
        ["run", "--stall-after=0", "--timeout=90s", "--grace=250ms", "-j", "1", "--output", "tty"],
    ])
    func usualCommandLinesAreReadEarly(_ arguments: [String]) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try run(moon, arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("moon: early load used"), "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("moon: quick reading matches the parser"), "\(arguments): \(result.stderr)")
    }

    /// What the quick reading is unsure of (a repeated flag, a value that
    /// looks like an option, an invalid value) is read by the parser, which
    /// reports the errors.
    @Test(arguments: [
        (["run", "-q", "-q"], 0),
        (["run", "--jobs", "x"], 2),
        (["run", "--output", "fancy"], 2),
        (["run", "--timeout", "-5s"], 2),
        (["run", "--grace", "soon"], 2),
        (["run", "-q", "-v"], 2),
    ])
    func unusualCommandLinesAreLeftToTheParser(_ arguments: [String], _ status: Int) throws {
        let moon = try Moon(graph: Self.graph)
        let result = try run(moon, arguments)
        #expect(Int(result.status) == status, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("quick reading"), "\(arguments): \(result.stderr)")
    }

    @Test func setValuesReachTheGraphWhenReadEarly() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try run(moon, ["run", "--json", "--set", "greeting=hi", "a"])
        #expect(result.stderr.contains("moon: early load used"))
        #expect(result.events("next", node: "a").first?["text"] as? String == "hi")
    }

    /// Help reads no graph: nothing is loaded early, and an invalid file
    /// in the directory does not matter.
    @Test func helpLoadsNothingEarly() throws {
        let moon = try Moon(graph: "not: [a, graph")
        let result = try run(moon, ["run", "--help"])
        #expect(result.status == 0)
        #expect(!result.stderr.contains("early load"), "\(result.stderr)")
        #expect(result.stdout.contains("USAGE"))
    }

    /// An option `moon run` does not have is the parser's to report, as
    /// from the root command: `moon run`, not `run`, in its usage.
    @Test func anUnknownOptionIsReportedByTheParser() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try run(moon, ["run", "--jbos", "2", "moon.yaml"])
        #expect(result.status == 2)
        #expect(!result.stderr.contains("early load"))
        #expect(result.stderr.contains("--jbos"), "\(result.stderr)")
        let invalid = try run(moon, ["run", "--jobs", "0", "moon.yaml"])
        #expect(invalid.status == 2)
        #expect(invalid.stderr.contains("--jobs must be at least 1"), "\(invalid.stderr)")
        #expect(invalid.stderr.contains("moon run"), "\(invalid.stderr)")
    }

    @Test func anInvalidGraphReadEarlyIsReportedAsUsual() throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { needs: zz, run: true }\n")
        let result = try run(moon, ["run", "-j", "2"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:3:"), "\(result.stderr)")
        #expect(result.stderr.contains("needs unknown node 'zz'"))
    }

    /// Every option of `moon run --help` is one the quick reading knows:
    /// those that take a value it skips with their value. An option added to
    /// `moon run` must be added to `EarlyGraph.valueOptions` (and `sample`
    /// here) or `EarlyGraph.flags` (and `flags` here).
    @Test func everyOptionWithAValueIsReadEarly() throws {
        let sample = ["--jobs": "2", "--output": "plain", "--color": "never", "--timeout": "1m", "--grace": "1s",
                      "--set": "greeting=hi", "--output-mode": "grouped", "--stall-after": "1s"]
        let moon = try Moon(graph: Self.graph)
        let help = try moon.run(["run", "--help"]).stdout
        let options = Set(help.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(where: { $0.hasPrefix("--") }), index + 1 < words.count,
                  words[index + 1].hasPrefix("<") else { return nil }
            return String(words[index])
        })
        #expect(options == Set(sample.keys), "moon run --help lists \(options.sorted())")
        let flags: Set<String> = ["--keep-going", "--dry-run", "--json", "--force", "--quiet", "--verbose"]
        let all = Set(help.split(separator: "\n").flatMap { $0.split(separator: " ") }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }.filter { $0.hasPrefix("--") && $0.count > 2 })
        #expect(all.subtracting(["--help", "--version"]) == Set(sample.keys).union(flags), "moon run --help lists \(all.sorted())")
        for flag in flags {
            let result = try run(moon, ["run", flag, "moon.yaml"])
            #expect(result.stderr.contains("moon: early load used"), "\(flag): \(result.stderr)")
            #expect(result.stderr.contains("moon: quick reading matches the parser"), "\(flag): \(result.stderr)")
        }
        for (option, value) in sample {
            let result = try run(moon, ["run", option, value, "moon.yaml"])
            #expect(result.stderr.contains("moon: early load used"), "\(option) \(value): \(result.stderr)")
            #expect(result.stderr.contains("moon: quick reading matches the parser"), "\(option) \(value): \(result.stderr)")
        }
    }
}
