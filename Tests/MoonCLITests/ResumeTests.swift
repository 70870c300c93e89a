import Foundation
import MoonEvents
import Testing

/// `moon run --resume` takes from the last run only what that run would
/// still have done the same way: a node whose command, environment or vars
/// changed runs again, `-B` resumes nothing, and a missing or unreadable
/// record is said, not silently taken for "nothing ran".
@Suite struct ResumeTests {
    static let graph = """
        version: 1
        vars:
          MSG: hello
        nodes:
          fetch:
            run: echo fetch >> ran.log && echo n=42 >> "$MOON_OUTPUT"
          process:
            needs: fetch
            run: echo process >> ran.log && echo "m=${{ needs.fetch.outputs.n }} ${{ vars.MSG }}" >> "$MOON_OUTPUT"
          report:
            needs: process
            run: test -f ok && echo "report ${{ needs.process.outputs.m }}"
        """

    static func outcome(_ result: Moon.Result, _ node: String) -> String {
        result.outcome(node)
    }

    static func report(_ result: Moon.Result) -> [String] {
        result.events("next", node: "report").compactMap { $0.text }
    }

    @Test func aChangedCommandRunsAgain() throws {
        let moon = try Moon(graph: Self.graph)
        #expect(try moon.run(["run"]).status == 1)
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "n=42", with: "n=43"))
        try moon.write("ok", "")
        let resumed = try moon.run(["run", "--resume", "--json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Self.outcome(resumed, "fetch") == "ran", "its command changed")
        #expect(Self.outcome(resumed, "process") == "ran", "its need ran again")
        #expect(Self.report(resumed) == ["report 43 hello"])

        // Only a dependent changed: what it needs is resumed.
        try FileManager.default.removeItem(atPath: moon.path("ok"))
        #expect(try moon.run(["run"]).status == 1)
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "n=42", with: "n=43")
            .replacingOccurrences(of: "echo process >>", with: "echo process-v2 >>"))
        try moon.write("ok", "")
        let again = try moon.run(["run", "--resume", "--json"])
        #expect(["fetch", "process", "report"].map { Self.outcome(again, $0) } == ["resumed", "ran", "ran"])
        #expect(moon.read("ran.log")?.hasSuffix("fetch\nprocess\nprocess-v2\n") == true, "\(moon.read("ran.log") ?? "")")
    }

    @Test func changedVarsRunAgain() throws {
        let moon = try Moon(graph: Self.graph)
        #expect(try moon.run(["run"]).status == 1)
        try moon.write("ok", "")
        let resumed = try moon.run(["run", "--resume", "--json", "--set", "MSG=changed"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        // The vars are every node's environment, as in the up-to-date fingerprint.
        #expect(Self.outcome(resumed, "fetch") == "ran")
        #expect(Self.outcome(resumed, "process") == "ran")
        #expect(Self.report(resumed) == ["report 42 changed"])
        #expect(moon.read("ran.log") == "fetch\nprocess\nfetch\nprocess\n")
    }

    @Test func forceResumesNothing() throws {
        let moon = try Moon(graph: Self.graph)
        #expect(try moon.run(["run"]).status == 1)
        try moon.write("ok", "")
        let forced = try moon.run(["run", "--resume", "-B", "--json"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(["fetch", "process", "report"].map { Self.outcome(forced, $0) } == ["ran", "ran", "ran"])
    }

    @Test func aMissingOrUnreadableRecordIsSaid() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("ok", "")
        let first = try moon.run(["run", "--resume"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("no earlier run of this graph to resume"), "\(first.stderr)")
        let record = try #require(try FileManager.default.contentsOfDirectory(atPath: moon.path(".moon/resume")).first)
        try moon.write(".moon/resume/" + record, "{ not json")
        let garbled = try moon.run(["run", "--resume"])
        #expect(garbled.status == 0, "\(garbled.stderr)")
        #expect(garbled.stderr.contains("cannot be read"), "\(garbled.stderr)")
        #expect(moon.read("ran.log") == "fetch\nprocess\nfetch\nprocess\n")
    }

    /// A record that cannot be saved (`.moon/resume` a file, or the record a
    /// directory) is said at the run that could not save it, not discovered
    /// at the next `--resume`.
    @Test func aRecordThatCannotBeSavedIsSaid() throws {
        for kind in ["resume is a file", "the record is a directory"] {
            let moon = try Moon(graph: Self.graph)
            try moon.write("ok", "")
            #expect(try moon.run(["run"]).status == 0)
            let record = try #require(try FileManager.default.contentsOfDirectory(atPath: moon.path(".moon/resume")).first)
            try FileManager.default.removeItem(atPath: moon.path(".moon/resume"))
            if kind == "resume is a file" {
                try moon.write(".moon/resume", "")
            } else {
                try moon.makeDirectory(".moon/resume/" + record)
            }
            try moon.write("ok", "changed")
            let run = try moon.run(["run", "-B"])
            #expect(run.status == 0, "\(kind): \(run.stderr)")
            #expect(run.stderr.contains("cannot save the resume record"), "\(kind): \(run.stderr)")
        }
    }
}
