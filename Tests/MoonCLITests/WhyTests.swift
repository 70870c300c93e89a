import Foundation
import MoonJSON
import Testing

/// `moon why NODE`, through the real binary: it names the parts of a node's
/// fingerprint that differ from its last success, says since when a node is
/// up to date and what made it run last, and what the output cache holds.
@Suite struct WhyTests {
    static let graph = """
        version: 1
        env:
          API_TOKEN: first-secret
          MODE: fast
        vars:
          level: "1"
        nodes:
          gen:
            sources: [src/*.txt]
            generates: [out.txt]
            run: cat src/*.txt > out.txt && echo "lines=$(wc -l < out.txt | tr -d ' ')" >> "$MOON_OUTPUT"
          use:
            needs: gen
            sources: [use.txt]
            run: echo "${{ needs.gen.outputs.lines }} at ${{ vars.level }}"
          always:
            run: echo hi
        """

    func project() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("src")
        try moon.write("src/a.txt", "a\n")
        try moon.write("use.txt", "u\n")
        return moon
    }

    func why(_ moon: Moon, _ arguments: [String]) throws -> String {
        let result = try moon.run(["why"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    func whyJSON(_ moon: Moon, _ arguments: [String]) throws -> JSONValue {
        let result = try moon.run(["why", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONParser.parse(result.stdout)
    }

    /// Validates `json` against schema/moon-why.schema.json with Python's
    /// jsonschema (Draft 2020-12); nil when that is not installed.
    static func schemaProblems(_ json: String) throws -> String? {
        let script = """
            import json, sys
            try:
                import jsonschema
            except ImportError:
                sys.exit(3)
            schema = json.load(open(sys.argv[1]))
            errors = list(jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).iter_errors(json.load(sys.stdin)))
            print("\\n".join(e.message for e in errors)); sys.exit(1 if errors else 0)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, Moon.root.appendingPathComponent("schema/moon-why.schema.json").path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(json.utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus == 3 || process.terminationStatus == 127 { return nil }
        return process.terminationStatus == 0 ? "" : text
    }

    @Test func everyJSONAnswerFitsTheSchema() throws {
        let moon = try project()
        var answers = [try moon.run(["why", "--json", "gen"]).stdout, try moon.run(["why", "--json", "always"]).stdout]
        #expect(try moon.run(["run"]).status == 0)
        answers.append(try moon.run(["why", "--json", "gen"]).stdout)
        try moon.write("src/a.txt", "other\n")
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "MODE: fast", with: "MODE: slow")
            .replacingOccurrences(of: "first-secret", with: "x").replacingOccurrences(of: "cat src", with: "sort src"))
        answers += [try moon.run(["why", "--json", "gen"]).stdout, try moon.run(["why", "--json", "use", "--set", "level=3"]).stdout]
        #expect(try moon.run(["run", "gen"]).status == 0)
        answers.append(try moon.run(["why", "--json", "use"]).stdout)
        for answer in answers {
            guard let problems = try Self.schemaProblems(answer) else { return }
            #expect(problems.isEmpty, "\(problems)\n\(answer)")
        }
    }

    @Test func neverRanThenUpToDateSinceItsSuccess() throws {
        let moon = try project()
        #expect(try why(moon, ["gen"]).contains("'gen' will run: it never ran here"))
        #expect(try moon.run(["run"]).status == 0)
        let text = try why(moon, ["gen"])
        #expect(text.contains("'gen' is up to date since "), "\(text)")
        #expect(text.contains("its first success recorded here"), "\(text)")
        let json = try whyJSON(moon, ["gen"])
        #expect(json["verdict"]?.string == "up to date")
        #expect(json["state"]?.string == "up-to-date")
        #expect(json["since"]?.string != nil)
    }

    @Test func namesAnEditedFileWithItsOldAndNewSizeAndHash() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src/a.txt", "a longer line\n")
        try moon.write("src/b.txt", "b\n")
        let text = try why(moon, ["gen"])
        #expect(text.contains("'gen' will run: 2 parts of its fingerprint differ"), "\(text)")
        #expect(text.range(of: #"file src/a\.txt changed: 2 bytes, [0-9a-f]{16} -> 14 bytes, [0-9a-f]{16}"#, options: .regularExpression) != nil,
                "\(text)")
        #expect(text.contains("file src/b.txt is new: 2 bytes"), "\(text)")
        let changes = try whyJSON(moon, ["gen"])["changes"]
        guard case .array(let items)? = changes, let first = items.first else {
            Issue.record("no changes in \(String(describing: changes))")
            return
        }
        #expect(first["kind"]?.string == "file")
        #expect(first["path"]?.string == "src/a.txt")
        #expect(first["old"]?["size"] == .int(2))
        #expect(first["new"]?["size"] == .int(14))
        #expect(first["old"]?["hash"]?.string != first["new"]?["hash"]?.string)
    }

    @Test func namesAChangedEnvironmentVariableAndHidesASecretOne() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "MODE: fast", with: "MODE: slow")
            .replacingOccurrences(of: "first-secret", with: "second-secret"))
        let text = try why(moon, ["gen"])
        #expect(text.contains("environment variable MODE changed (now 'slow')"), "\(text)")
        #expect(text.contains("environment variable API_TOKEN changed (value hidden: the name looks secret)"), "\(text)")
        #expect(!text.contains("secret-"), "a secret's value was printed: \(text)")
        let json = try moon.run(["why", "--json", "gen"]).stdout
        #expect(!json.contains("first-secret") && !json.contains("second-secret"), "\(json)")
        // Nothing of either value is kept in .moon/ either (only digests).
        let store = try Data(contentsOf: URL(fileURLWithPath: moon.path(".moon/state.db")))
            + ((try? Data(contentsOf: URL(fileURLWithPath: moon.path(".moon/state.db-wal")))) ?? Data())
        #expect(store.range(of: Data("first-secret".utf8)) == nil)
    }

    @Test func showsTheCommandAsADiff() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "cat src/*.txt > out.txt", with: "sort src/*.txt > out.txt"))
        let text = try why(moon, ["gen"])
        #expect(text.contains("command changed:"), "\(text)")
        #expect(text.contains("-   cat src/*.txt > out.txt"), "\(text)")
        #expect(text.contains("+   sort src/*.txt > out.txt"), "\(text)")
    }

    @Test func namesANeedThatRanAndChangedItsOutputs() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src/b.txt", "b\n")
        // Before the need runs, the node may run.
        #expect(try why(moon, ["use"]).contains("'use' may run: 'gen' runs"))
        #expect(try moon.run(["run", "gen"]).status == 0)
        let text = try why(moon, ["use"])
        #expect(text.contains("need 'gen' ran and changed what it left: output lines changed"), "\(text)")
    }

    @Test func namesAChangedVarFromSet() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        let text = try why(moon, ["use", "--set", "level=2"])
        #expect(text.contains("var level changed: '1' -> '2'"), "\(text)")
        // `gen` does not read the var: it stays up to date.
        #expect(try why(moon, ["gen", "--set", "level=2"]).contains("'gen' is up to date"))
    }

    @Test func saysWhatMadeItRunLastTime() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src/a.txt", "changed\n")
        #expect(try moon.run(["run"]).status == 0)
        let text = try why(moon, ["gen"])
        #expect(text.contains("'gen' is up to date since"), "\(text)")
        #expect(text.contains("because these parts had changed since the success before:"), "\(text)")
        #expect(text.contains("file src/a.txt changed: 2 bytes"), "\(text)")
        #expect(try moon.run(["run", "--force"]).status == 0)
        #expect(try why(moon, ["gen"]).contains("forced (--force or --force-only)"))
    }

    @Test func aFailedAttemptAndANodeWithoutSources() throws {
        let moon = try project()
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "run: cat src", with: "run: false && cat src"))
        #expect(try moon.run(["run", "gen"]).status != 0)
        let text = try why(moon, ["gen"])
        #expect(text.contains("'gen' will run: it never succeeded; its last attempt failed (run 1,"), "\(text)")
        #expect(try whyJSON(moon, ["gen"])["state"]?.string == "failed")
        let always = try why(moon, ["always"])
        #expect(always.contains("'always' runs every time: it declares no 'sources'"), "\(always)")
    }

    @Test func aRunKilledWhileTheNodeRanLeavesItUnfinished() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow:
                sources: [in.txt]
                run: |
                  if [ "$(cat in.txt)" = wait ]; then echo $$ > pid; exec sleep 60; fi
            """)
        try moon.write("in.txt", "go\n")
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("in.txt", "wait\n")
        let running = try moon.start(["run"])
        #expect(eventually(30) { moon.read("pid").flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } != nil })
        running.signal(SIGKILL)
        _ = try? running.wait()
        if let pid = moon.read("pid").flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) { kill(pid, SIGKILL) }
        let text = try why(moon, ["slow"])
        #expect(text.contains("'slow' will run: it started after its last success"), "\(text)")
        #expect(text.contains("but did not finish (moon was stopped or killed)"), "\(text)")
        #expect(text.contains("file in.txt changed: 3 bytes"), "\(text)")
    }

    @Test func anUnknownNodeIsAnErrorWithASuggestion() throws {
        let moon = try project()
        let result = try moon.run(["why", "gne"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown node 'gne' (did you mean 'gen'?)"), "\(result.stderr)")
        let none = try moon.run(["why"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("moon why needs the name of a node"), "\(none.stderr)")
    }

    @Test func namesTheNearestCacheEntryWhenTheCacheHasNone() throws {
        let moon = try project()
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src/a.txt", "new content\n")
        let text = try why(moon, ["gen"])
        #expect(text.contains("The output cache has no entry for its key"), "\(text)")
        #expect(text.contains("the nearest of its 1 entry"), "\(text)")
        #expect(text.contains("  file src/a.txt changed: 2 bytes"), "\(text)")
        let cache = try whyJSON(moon, ["gen"])["cache"]
        #expect(cache?["hit"] == .bool(false))
        #expect(cache?["entries"] == .int(1))
        // Back to what the first entry was made from, after a success with
        // other content: the node will run, and the cache restores it.
        #expect(try moon.run(["run"]).status == 0)
        try moon.write("src/a.txt", "a\n")
        let back = try why(moon, ["gen"])
        #expect(back.contains("The output cache has an entry for it"), "\(back)")
        #expect(try whyJSON(moon, ["gen"])["cache"]?["hit"] == .bool(true))
    }
}
