import Foundation
import Testing
@testable import MoonReport

/// `moon replay` of recordings, compared with the reporters' own output.
@Suite(.enabled(if: Repository.hasMoon, "the moon binary is not built (swift build)"))
struct ReplayCommandTests {
    /// A JSON Lines file in the temporary directory; the test removes it with `defer`.
    func write(_ text: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moon-replay-\(UUID().uuidString).jsonl")
        try! Data(text.utf8).write(to: url)
        return url
    }

    @Test func plainReplayIsThePlainLog() throws {
        let url = write(Fixture.jsonLines(Fixture.failingRun))
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", "--output", "plain", url.path]))
        #expect(result.status == 1)
        let capture = CapturedSink()
        let reporter = PlainReporter(sink: capture.sink)
        for event in Fixture.failingRun { reporter.report(event) }
        reporter.finish()
        #expect(result.stdout == capture.text)
    }

    @Test func badLineIsAnErrorWithItsNumber() throws {
        let url = write(Fixture.jsonLines(Array(Fixture.passingRun.prefix(2))) + "{\"v\":1,\"seq\":3}\n")
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", url.path]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon: error: \(url.path):3: missing field 'ts'"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing rendered from a bad file")
    }

    @Test func missingFileIsAnError() throws {
        let result = try #require(runProgram(Repository.moon, ["replay", "/nonexistent/events.jsonl"]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("no such file"))
    }

    @Test func passingRunExitsZero() throws {
        let url = write(Fixture.jsonLines(Fixture.passingRun))
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try #require(runProgram(Repository.moon, ["replay", "-q", url.path]))
        #expect(result.status == 0)
        #expect(result.stdout == "moon: ok - 3 succeeded in 203ms\n")
    }

    /// A real run, recorded with --json and replayed: valid against the schema, and
    /// the plain replay (times normalised) matches a golden file.
    @Test func realRunRecordsAndReplays() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moon-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("""
            version: 1
            name: chain
            nodes:
              first: { run: "echo one; echo two >&2" }
              second: { needs: first, uses: echo, with: { message: "42" } }
              third: { needs: second, run: "echo nope; exit 4" }
              fourth: { needs: third, run: "echo never" }
            """.utf8).write(to: dir.appendingPathComponent("moon.yaml"))
        let recorded = try #require(runProgram(Repository.moon, ["run", "--json"], directory: dir))
        #expect(recorded.status == 1)
        if SchemaValidator.available {
            let valid = SchemaValidator.validate(recorded.stdout, complete: true)
            #expect(valid.ok, "\(valid.messages)")
        }
        let url = write(recorded.stdout)
        defer { try? FileManager.default.removeItem(at: url) }
        let replayed = try #require(runProgram(Repository.moon, ["replay", "--output", "plain", "-v", url.path]))
        #expect(replayed.status == 1)
        // Which node was slowest depends on the machine: keep the line, not
        // its order; whether a node stands out as heaviest too, so not that line.
        let text = Golden.normalizeTimes(replayed.stdout).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("heaviest: ") }
            .map { $0.hasPrefix("slowest: ") ? "slowest: <nodes>" : String($0) }
            .joined(separator: "\n")
        Golden.check("replay-chain.txt", text)
    }
}
