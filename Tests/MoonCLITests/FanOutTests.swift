import Foundation
import MoonEvents
import Testing

/// A `for-each` over a need's output, through the real binary: expanded
/// when the need completes, each item an instance with its own events.
@Suite struct FanOutTests {
    static func graph(files: String, process: String = "run: printf '<%s>\\n' ${{ item }}") -> String {
        """
        version: 1
        name: fan
        nodes:
          shards:
            run: echo 'files=\(files)' >> "$MOON_OUTPUT"
          process:
            needs: [shards]
            for-each: ${{ needs.shards.outputs.files }}
            \(process)
          after:
            needs: [process]
            run: echo done
        """
    }

    func stdout(_ result: Moon.Result, _ node: String) -> [String] {
        result.events("next", node: node).compactMap { $0.text }
    }

    @Test func eachItemRunsAsAnInstanceBeforeWhatNeedsTheTemplate() throws {
        let moon = try Moon(graph: Self.graph(files: #"["a.txt","b c.txt","$(touch PWNED)"]"#))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let names = ["process[a.txt]", "process[b c.txt]", "process[$(touch PWNED)]"]
        #expect(result.events("expand", node: "process").first?.instances == names)
        // Each item is one word, passed as data.
        #expect(stdout(result, "process[a.txt]") == ["<a.txt>"])
        #expect(stdout(result, "process[b c.txt]") == ["<b c.txt>"])
        #expect(stdout(result, "process[$(touch PWNED)]") == ["<$(touch PWNED)>"])
        #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED")))
        let start = try #require(result.events("start", node: "process[b c.txt]").first)
        #expect(start.instance?.template == "process" && start.instance?.item == "b c.txt")
        // `after` starts once every instance has completed, and the template ends with them.
        let order = result.events.compactMap { event -> String? in
            let kind = event.name
            guard ["start", "complete"].contains(kind) else { return nil }
            return "\(kind) \(event.node ?? "")"
        }
        let afterStart = try #require(order.firstIndex(of: "start after"))
        for name in names { #expect(order.firstIndex(of: "complete \(name)").map { $0 < afterStart } == true, "\(order)") }
        #expect(order.firstIndex(of: "complete process").map { $0 < afterStart } == true, "\(order)")
        let counts = result.events("graph-complete").first?.counts
        // The instances count, not the template they expanded.
        #expect(counts?.succeeded == 5)
    }

    @Test(arguments: [#"{"a":1}"#, "[1,2]", "a.txt"])
    func aValueThatIsNotAListOfStringsFailsTheNodeThatFansOut(value: String) throws {
        let moon = try Moon(graph: Self.graph(files: value))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let error = try #require(result.events("error", node: "process").first?.error)
        #expect(error.kind == .fanOut)
        #expect(error.message.contains(value), "\(error)")
        #expect(result.events("skip", node: "after").first?.reason == .upstreamFailed)
        // The terminal and log output says why, with the value.
        let plain = try moon.run(["run", "--output", "plain"])
        #expect(plain.status == 1)
        #expect(plain.stdout.contains("✗ process failed (bad for-each value): needs.shards.outputs.files is not a JSON list of strings: \(value)"),
                "\(plain.stdout)")
    }

    @Test func anEmptyListSucceedsWithoutInstances() throws {
        let moon = try Moon(graph: Self.graph(files: "[]"))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.events("expand", node: "process").first?.instances == [])
        #expect(result.events("complete", node: "process").count == 1)
        #expect(stdout(result, "after") == ["done"])
    }

    @Test func eachInstanceRetriesOnItsOwn() throws {
        let moon = try Moon(graph: Self.graph(files: #"["a","b"]"#, process: """
            retry: { times: 2 }
                run: test ${{ item }} != b || test "$MOON_ATTEMPT" = 2
            """))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.events("retry").compactMap { $0.node } == ["process[b]"])
        #expect(result.events("start", node: "process[b]").count == 2)
        #expect(result.events("start", node: "process[a]").count == 1)
    }

    @Test func theDryRunAndTheGraphSayWhenTheTemplateExpands() throws {
        let moon = try Moon(graph: Self.graph(files: "[]"))
        let dry = try moon.run(["run", "-n"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("process  level 1  default  expands when shards completes"), "\(dry.stdout)")
        let graph = try moon.run(["graph"])
        #expect(graph.stdout.contains("expands when shards completes"), "\(graph.stdout)")
    }

    /// Two hundred instances: the log shows each one's output, and one
    /// line for the template, not one per instance.
    @Test func aLogOfHundredsOfInstancesStaysShort() throws {
        let items = "[" + (0..<200).map { "\"f\($0)\"" }.joined(separator: ",") + "]"
        let moon = try Moon(graph: Self.graph(files: items, process: "run: [\"true\"]"))
        let result = try moon.run(["run", "--output", "plain"], limit: 120)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count < 12, "\(result.stdout)")
        #expect(result.stdout.contains("✓ process 200/200"), "\(result.stdout)")
        #expect(result.stdout.contains("moon: ok - 202 succeeded"), "\(result.stdout)")
    }

    /// A fan-out past `FanOutLimit.instances`, in the file or at run time,
    /// is an error that says the limit, never millions of nodes.
    @Test func aFanOutBeyondTheLimitIsAnError() throws {
        let seq = "$(seq -f '\"f%g\"' -s, 100001)"
        let moon = try Moon(graph: Self.graph(files: "[x]", process: "run: [\"true\"]")
            .replacingOccurrences(of: "echo 'files=[x]'", with: "echo \"files=[\(seq)]\""))
        let result = try moon.run(["run", "--output", "plain"], limit: 120)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("needs.shards.outputs.files has 100001 items; a node fans out to at most 100000 instances"),
                "\(result.stdout.suffix(2000))")

        let keys = (0..<6).map { "k\($0): [0,1,2,3,4,5,6,7,8,9]" }.joined(separator: ", ")
        try moon.write("moon.yaml", "version: 1\nnodes:\n  a:\n    matrix: { \(keys) }\n    run: echo\n")
        let check = try moon.run(["check"], limit: 60)
        #expect(check.status == 2)
        #expect(check.stderr.contains("moon.yaml:4:13: error: the matrix of 'a' has 1000000 combinations; a node fans out to at most 100000 instances"),
                "\(check.stderr)")
    }

    /// Instances made at run time are checked as static ones are: their
    /// sources, generates, depfile and fingerprint are remembered, so a
    /// second run finds them up to date and an edit reruns only its instance.
    @Test func instancesMadeAtRunTimeAreUpToDateUntilTheirInputsChange() throws {
        let moon = try Moon(graph: Self.graph(files: #"["a.txt","b c.txt"]"#, process: """
            sources: ["${{ item }}"]
                generates: ["${{ item }}.n"]
                depfile: "${{ item }}.d"
                run: |
                  wc -l < ${{ item }} > ${{ item }}.n
                  printf '%s: common.h\\n' ${{ item }}.n > ${{ item }}.d
            """))
        try moon.write("a.txt", "1\n")
        try moon.write("b c.txt", "1\n2\n")
        try moon.write("common.h", "x\n")
        func ran(_ result: Moon.Result) -> [String] {
            result.events("complete").compactMap { $0.node }.filter { $0.hasPrefix("process[") }.sorted()
        }
        func upToDate(_ result: Moon.Result) -> [String] {
            result.events("skip").filter { $0.reason == .upToDate }.compactMap { $0.node }.sorted()
        }
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(ran(first) == ["process[a.txt]", "process[b c.txt]"])
        let second = try moon.run(["run", "--json"])
        #expect(ran(second) == [], "\(second.stdout)")
        #expect(upToDate(second) == ["process[a.txt]", "process[b c.txt]"], "\(second.stdout)")
        // Before the run, the instances are not known: the template may run.
        let status = try moon.run(["status", "process"])
        #expect(status.stdout.contains("process  may run: expands when 'shards' completes; each instance is checked then"),
                "\(status.stdout)\(status.stderr)")
        // An edit of one item's source reruns that instance only.
        try moon.write("a.txt", "1\n2\n3\n")
        let third = try moon.run(["run", "--json"])
        #expect(ran(third) == ["process[a.txt]"], "\(third.stdout)")
        #expect(upToDate(third) == ["process[b c.txt]"], "\(third.stdout)")
        #expect(moon.read("a.txt.n")?.trimmingCharacters(in: .whitespaces) == "3\n")
        // A file its depfile listed reruns every instance that read it.
        try moon.write("common.h", "y\n")
        let fourth = try moon.run(["run", "--json"])
        #expect(ran(fourth) == ["process[a.txt]", "process[b c.txt]"], "\(fourth.stdout)")
        // A missing output comes back from the output cache, for its instance
        // only; the history has a row for each.
        try FileManager.default.removeItem(atPath: moon.path("b c.txt.n"))
        let fifth = try moon.run(["run", "--json"])
        #expect(ran(fifth) == [] && upToDate(fifth) == ["process[a.txt]"], "\(fifth.stdout)")
        #expect(fifth.events("skip", node: "process[b c.txt]").first?.reason == .cacheHit, "\(fifth.stdout)")
        #expect(moon.read("b c.txt.n")?.trimmingCharacters(in: .whitespaces) == "2\n")
        let history = try moon.run(["history", "--nodes", "--limit", "1"])
        #expect(history.status == 0 && history.stdout.contains("process[a.txt]"), "\(history.stdout)\(history.stderr)")
    }

    /// An sbatch script cannot expand a template at run time: export says so.
    @Test func exportRefusesAFanOutOverANeedsOutput() throws {
        let moon = try Moon(graph: Self.graph(files: "[]"))
        let result = try moon.run(["export", "--format", "sbatch"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot export node 'process': its for-each reads needs.shards.outputs.files"), "\(result.stderr)")
    }

    /// An instance's name is data in the sbatch script too: the fan-out is
    /// one job array whose tasks get their names quoted, never run by the
    /// submitting shell, and each is printed with its task id.
    @Test func exportQuotesInstanceNames() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              greet:
                for-each: ["$(touch PWNED)", 'a"b', "50%j"]
                run: echo ${{ item }}
            """)
        try moon.makeDirectory("fakebin")
        try moon.writeExecutable("fakebin/sbatch", "#!/bin/sh\nn=$(ls \"$(dirname \"$0\")\" | grep -c args)\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args$n\"\ncat > \"$(dirname \"$0\")/job$n\"\necho 42$n\n")
        let export = try moon.run(["export", "--format", "sbatch", "-o", "submit.sh"])
        #expect(export.status == 0, "\(export.stderr)")
        let submit = try shell("MOON_SLURM_LOGS=logs PATH=\"$PWD/fakebin:$PATH\" sh submit.sh", in: moon)
        #expect(submit.status == 0, "\(submit.stderr)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("PWNED")), "the submitting shell ran an item")
        let arguments = (moon.read("fakebin/args0") ?? "").split(separator: "\n")
        #expect(arguments.contains("--array=0-2"))
        #expect(arguments.filter { $0.hasPrefix("--output=") } == ["--output=logs/greet.%A_%a.out"])
        let job = moon.read("fakebin/job0") ?? ""
        #expect(job.contains("export MOON_NODE='greet[$(touch PWNED)]'"), "\(job)")
        #expect(job.contains("export MOON_NODE='greet[a\"b]'"), "\(job)")
        #expect(submit.stdout == "greet[$(touch PWNED)] 420_0\ngreet[a\"b] 420_1\ngreet[50%j] 420_2\n", "\(submit.stdout)")
    }
}
