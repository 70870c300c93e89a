import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// The `--json` events against schema/moon-events.schema.json, checked by a
/// real JSON Schema validator (Python's jsonschema, Draft 2020-12) through
/// schema/validate-events.py, which the end-to-end tests use too.
enum SchemaValidator {
    static let script = Repository.root.appendingPathComponent("schema/validate-events.py").path
    static let python = which("python3")

    static let available: Bool = {
        guard let python else { return false }
        return runProgram(python, ["-c", "import jsonschema"])?.status == 0
    }()

    static let reason: Comment = python == nil
        ? "python3 is not installed"
        : "python3 has no jsonschema module (python3 -m pip install jsonschema)"

    /// Validates a JSON Lines text; returns the validator's complaints ("" when valid).
    static func validate(_ jsonLines: String, complete: Bool = false) -> (ok: Bool, messages: String) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moon-events-\(UUID().uuidString).jsonl")
        try! Data(jsonLines.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        guard let result = runProgram(python!, [script, url.path] + (complete ? ["--complete"] : [])) else {
            return (false, "could not run \(script)")
        }
        return (result.status == 0, result.stderr)
    }
}

@Suite(.enabled(if: SchemaValidator.available, SchemaValidator.reason))
struct EventSchemaTests {
    @Test func everyEventKindIsValid() {
        let kinds = Set(Fixture.everyKind.map(\.name))
        #expect(kinds == ["graph-start", "start", "next", "retry", "complete", "error", "skip", "expand", "graph-complete", "watch"])
        let result = SchemaValidator.validate(Fixture.jsonLines(Fixture.everyKind))
        #expect(result.ok, "\(result.messages)")
    }

    @Test func completeStreamsPassTheStreamChecks() {
        for run in [Fixture.failingRun, Fixture.passingRun] {
            let result = SchemaValidator.validate(Fixture.jsonLines(run), complete: true)
            #expect(result.ok, "\(result.messages)")
        }
    }

    /// The instances an `expand` names join the plan: each must end once.
    @Test func anExpandedInstanceThatNeverEndsMakesTheStreamIncomplete() {
        let events: [RunEvent] = [
            Fixture.at(0, .graphStart(graph: "g", nodes: ["p"], queues: [QueueWidth(name: "default", concurrency: 1)])),
            Fixture.at(1, .expand(node: "p", instances: ["p[a]", "p[b]"])),
            RunEvent(time: Fixture.t0, kind: .complete(node: "p[a]", durationMilliseconds: 1, exitCode: 0, outputs: []),
                     instance: RunEvent.Instance(template: "p", item: "a")),
            Fixture.at(2, .complete(node: "p", durationMilliseconds: 1, exitCode: nil, outputs: [])),
            Fixture.at(3, .graphComplete(ok: true, durationMilliseconds: 3, counts: Fixture.counts(2, 0, 0, 0), criticalPath: [])),
        ]
        let result = SchemaValidator.validate(Fixture.jsonLines(events), complete: true)
        #expect(!result.ok)
        #expect(result.messages.contains("node 'p[b]' of the plan ended 0 times"), "\(result.messages)")
    }

    /// Watch mode: runs one after another in one stream, each rerun after a watch event.
    @Test func watchStreamsAreCheckedRunByRun() {
        let rerun = Fixture.passingRun.map { event -> RunEvent in
            var later = event
            later.time = event.time.addingTimeInterval(60)
            return later
        }
        let trigger = RunEvent(time: Fixture.t0.addingTimeInterval(59), kind: .watch(changed: ["src/a.c"], nodes: ["build"]))
        let watched = SchemaValidator.validate(Fixture.jsonLines(Fixture.passingRun + [trigger] + rerun), complete: true)
        #expect(watched.ok, "\(watched.messages)")
        let cut = SchemaValidator.validate(Fixture.jsonLines(Fixture.passingRun + [trigger] + rerun.dropLast()), complete: true)
        #expect(!cut.ok)
    }

    @Test func cutOffStreamIsNotComplete() {
        let result = SchemaValidator.validate(Fixture.jsonLines(Array(Fixture.failingRun.prefix(9))), complete: true)
        #expect(!result.ok)
        #expect(result.messages.contains("does not end with graph-complete"))
    }

    /// The validator really validates: each of these breaks the schema.
    @Test(arguments: [
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"start","node":"a","queue":"default","attempt":1,"extra":true}"#,
        #"{"v":2,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"a","reason":"condition"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22 10:04:05","event":"skip","node":"a","reason":"condition"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"a","reason":"bored"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"next","node":"a","stream":"stdout"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"error","node":"a","duration_ms":1,"error":{"kind":"oops","message":""}}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"graph-complete","ok":"yes","duration_ms":1,"counts":{"succeeded":0,"failed":0,"skipped":0,"canceled":0},"critical_path":[]}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"finished"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"graph-start","graph":"g","nodes":1,"queues":{}}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"expand","node":"p"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"expand","node":"p","instances":["q[a]"],"template":"p"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"p[a]","template":"p","item":"a","matrix":{"k":"v"},"reason":"canceled"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"p[a]","item":"a","reason":"canceled"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"p[a]","template":"p","reason":"canceled"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"p[a","reason":"canceled"}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"watch","changed":["a"]}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"watch","changed":"a","nodes":[]}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"complete","node":"a","duration_ms":1,"outputs":{},"usage":{"cpu_user_ms":1,"cpu_sys_ms":0,"max_rss_bytes":-1,"source":"rusage"}}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"complete","node":"a","duration_ms":1,"outputs":{},"usage":{"cpu_user_ms":1,"cpu_sys_ms":0,"max_rss_bytes":1,"source":"guess"}}"#,
        #"{"v":1,"seq":1,"ts":"2026-11-22T10:04:05.123Z","event":"skip","node":"a","reason":"condition","usage":{"cpu_user_ms":1,"cpu_sys_ms":0,"max_rss_bytes":1,"source":"rusage"}}"#,
    ])
    func invalidEventsAreRejected(line: String) {
        let result = SchemaValidator.validate(line + "\n")
        #expect(!result.ok, "accepted: \(line)")
    }

    @Test func schemaFileIsValidJSONWithTheRightDialect() throws {
        let data = try Data(contentsOf: Repository.root.appendingPathComponent("schema/moon-events.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
    }
}
