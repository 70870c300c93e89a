import Foundation
import Testing
@testable import MoonReport
import MoonEvents

/// An `OutputSink` over a temporary file, read back as text.
final class CapturedSink {
    let url: URL
    let sink: OutputSink
    private let handle: FileHandle

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("moon-report-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try! FileHandle(forWritingTo: url)
        sink = OutputSink(fd: handle.fileDescriptor)
    }

    deinit {
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
    }

    var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    var now: Date
    init(_ start: Date) { now = start }
    func advance(ms: Int) { now = now.addingTimeInterval(Double(ms) / 1000) }
}

/// Synthetic runs: fixed times, so reporters render them the same every time.
enum Fixture {
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)

    static func at(_ ms: Int, _ kind: RunEvent.Kind) -> RunEvent {
        RunEvent(time: t0.addingTimeInterval(Double(ms) / 1000), kind: kind)
    }

    /// A run with a retry, output on every stream, a failure with more than
    /// 20 lines of output, a cancellation and a skip.
    static let failingRun: [RunEvent] = {
        var e: [RunEvent] = [
            at(0, .graphStart(graph: "demo", nodes: ["fetch", "build", "test", "lint", "deploy"],
                              queues: [QueueWidth(name: "default", concurrency: 2), QueueWidth(name: "net", concurrency: 1)])),
            at(1, .start(node: "fetch", queue: "net", attempt: 1, command: "curl -fsS https://example.org/data.json -o data.json")),
            at(2, .start(node: "build", queue: "default", attempt: 1, command: "swift build -c release")),
            at(40, .next(node: "build", stream: .stdout, text: "Compiling moon (12 files)", continued: false)),
            at(90, .next(node: "fetch", stream: .stderr, text: "curl: (22) 503 Service Unavailable", continued: false)),
            at(100, .retry(node: "fetch", attempt: 1, delayMilliseconds: 100, error: NodeError(.exit, "exited with code 22", exitCode: 22))),
            at(200, .start(node: "fetch", queue: "net", attempt: 2, command: "curl -fsS https://example.org/data.json -o data.json")),
            at(450, .next(node: "fetch", stream: .stdout, text: "saved data.json", continued: false)),
            at(550, .complete(node: "fetch", durationMilliseconds: 350, exitCode: 0, outputs: [])),
            at(1100, .next(node: "build", stream: .value, text: "42", continued: false)),
            at(1202, .complete(node: "build", durationMilliseconds: 1200, exitCode: 0, outputs: [KeyValue("artifact", "moon")])),
            at(1203, .start(node: "test", queue: "default", attempt: 1, command: "set -e\nswift test --parallel\necho done")),
            at(1204, .start(node: "lint", queue: "default", attempt: 1, command: "swiftlint --strict")),
        ]
        for i in 1...24 {
            e.append(at(1210 + i * 10, .next(node: "test", stream: i == 24 ? .stderr : .stdout,
                                             text: i == 24 ? "error: testLogin failed: expected 200, got 500" : "Test Case \(i) passed",
                                             continued: false)))
        }
        e += [
            at(1503, .error(node: "test", durationMilliseconds: 300, error: NodeError(.exit, "exited with code 1", exitCode: 1))),
            at(1510, .error(node: "lint", durationMilliseconds: 306, error: NodeError(.canceled, "canceled because another node failed", signal: 15))),
            at(1511, .skip(node: "deploy", reason: .upstreamFailed)),
            at(1512, .graphComplete(ok: false, durationMilliseconds: 1512, counts: counts(2, 1, 1, 1), criticalPath: ["build", "test"])),
        ]
        return e
    }()

    /// Everything succeeds.
    static let passingRun: [RunEvent] = [
        at(0, .graphStart(graph: "quick", nodes: ["one", "two", "final"], queues: [QueueWidth(name: "default", concurrency: 4)])),
        at(1, .start(node: "one", queue: "default", attempt: 1, command: "echo hello")),
        at(1, .start(node: "two", queue: "default", attempt: 1, command: "sleep 0.2")),
        at(3, .next(node: "one", stream: .stdout, text: "hello", continued: false)),
        at(4, .complete(node: "one", durationMilliseconds: 3, exitCode: 0, outputs: [])),
        at(201, .complete(node: "two", durationMilliseconds: 200, exitCode: 0, outputs: [])),
        at(202, .start(node: "final", queue: "default", attempt: 1, command: "")),
        at(202, .next(node: "final", stream: .value, text: "5", continued: false)),
        at(203, .complete(node: "final", durationMilliseconds: 1, exitCode: nil, outputs: [])),
        at(203, .graphComplete(ok: true, durationMilliseconds: 203, counts: counts(3, 0, 0, 0), criticalPath: ["two", "final"])),
    ]

    /// One of each event kind and of each optional field, for the schema.
    static let everyKind: [RunEvent] = failingRun + [
        RunEvent(time: t0.addingTimeInterval(1.599), kind: .start(node: "hpc", queue: "cluster", attempt: 1, command: "srun ./simulate",
                                                                                       jobID: "4242")),
        at(1600, .next(node: "test", stream: .stdout, text: String(repeating: "x", count: 10) + "\u{1B}[31m\t\"quoted\" é 日本 \u{0}", continued: true)),
        at(1601, .error(node: "test", durationMilliseconds: 5, error: NodeError(.signal, "killed by SIGKILL", signal: 9))),
        at(1602, .error(node: "test", durationMilliseconds: 5, error: NodeError(.timeout, "timed out after 1s"))),
        at(1603, .error(node: "test", durationMilliseconds: 0, error: NodeError(.spawn, "no such program: swfit"))),
        at(1604, .error(node: "test", durationMilliseconds: 1, error: NodeError(.builtin, "fail: boom"))),
        at(1605, .skip(node: "deploy", reason: .condition)),
        at(1606, .skip(node: "deploy", reason: .upToDate)),
        at(1607, .skip(node: "deploy", reason: .canceled)),
        at(1608, .complete(node: "x.y+z-1_", durationMilliseconds: 0, exitCode: nil, outputs: [KeyValue("b", "2"), KeyValue("a", "1")])),
        at(1609, .expand(node: "process", instances: ["process[a.txt]", "process[b c]"])),
        RunEvent(time: t0.addingTimeInterval(1.609), kind: .start(node: "process[a.txt]", queue: "default", attempt: 1, command: "wc"),
                 instance: RunEvent.Instance(template: "process", item: "a.txt")),
        RunEvent(time: t0.addingTimeInterval(1.609), kind: .retry(node: "lib:obj[src/x.c]", attempt: 1, delayMilliseconds: 0,
                                                                 error: NodeError(.exit, "exited with code 1")),
                 instance: RunEvent.Instance(template: "lib:obj", item: "src/x.c")),
        RunEvent(time: t0.addingTimeInterval(1.609), kind: .complete(node: "test[unit,O2]", durationMilliseconds: 3, exitCode: 0, outputs: []),
                 instance: RunEvent.Instance(template: "test", matrix: [KeyValue("suite", "unit"), KeyValue("opt", "O2")])),
        RunEvent(time: t0.addingTimeInterval(1.609), kind: .skip(node: "process[]]", reason: .canceled),
                 instance: RunEvent.Instance(template: "process", item: "]")),
        at(1609, .error(node: "process", durationMilliseconds: 0, error: NodeError(.fanOut, "needs.shards.outputs.files is not a JSON list of strings: {"))),
        measured(at(1609, .complete(node: "big", durationMilliseconds: 2100, exitCode: 0, outputs: [])),
                 NodeUsage(cpuUserMilliseconds: 1830, cpuSystemMilliseconds: 215, maxRSSBytes: 223_432_704)),
        measured(at(1609, .error(node: "bad", durationMilliseconds: 40, error: NodeError(.exit, "exited with code 3", exitCode: 3))),
                 NodeUsage(cpuUserMilliseconds: 0, cpuSystemMilliseconds: 3, maxRSSBytes: 4096)),
        at(1609, .graphStart(graph: "empty", nodes: [], queues: [])),
        at(1610, .graphComplete(ok: true, durationMilliseconds: 0, counts: RunCounts(), criticalPath: [])),
        at(1611, .watch(changed: ["src/a.c", "/usr/include/stdio.h"], nodes: ["build", "test"])),
    ]

    /// `event` with its `usage`.
    static func measured(_ event: RunEvent, _ usage: NodeUsage) -> RunEvent {
        var event = event
        event.usage = usage
        return event
    }

    static func counts(_ succeeded: Int, _ failed: Int, _ skipped: Int, _ canceled: Int) -> RunCounts {
        var c = RunCounts()
        c.succeeded = succeeded
        c.failed = failed
        c.skipped = skipped
        c.canceled = canceled
        return c
    }

    static func jsonLines(_ events: [RunEvent]) -> String {
        events.enumerated().map { EventEncoder.encode($1, seq: $0 + 1) + "\n" }.joined()
    }
}

/// Golden files in Tests/MoonReportTests/Golden; `MOON_RECORD=1 swift test`
/// writes them anew.
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let url = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["MOON_RECORD"] == "1" {
            try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try! Data(actual.utf8).write(to: url)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("no golden file \(name); record it with MOON_RECORD=1 swift test", sourceLocation: sourceLocation)
            return
        }
        if expected != actual {
            Issue.record("\(name) differs (re-record with MOON_RECORD=1 if intended):\n--- expected\n\(expected)--- actual\n\(actual)",
                         sourceLocation: sourceLocation)
        }
    }

    /// Durations replaced with `<t>`, for output of real runs.
    static func normalizeTimes(_ text: String) -> String {
        let pattern = try! NSRegularExpression(pattern: #"\b\d+(\.\d+)?(ms|s)\b|\b\d+m\d{2}s\b|\b\d+h\d{2}m\b"#)
        return pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<t>")
    }
}

/// Runs a program to completion; nil when it cannot be started.
@discardableResult
func runProgram(_ path: String, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
                stdin: String? = nil) -> (status: Int32, stdout: String, stderr: String)? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    // Without an environment of its own, the test's, less what would force
    // colour into output the tests read as plain text.
    process.environment = environment ?? ProcessInfo.processInfo.environment.filter { $0.key != "FORCE_COLOR" && $0.key != "CLICOLOR_FORCE" }
    if let directory { process.currentDirectoryURL = directory }
    // Files, not pipes: nothing to drain while it runs.
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("moon-prog-\(UUID().uuidString)")
    let outURL = base.appendingPathExtension("out"), errURL = base.appendingPathExtension("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }
    guard let out = try? FileHandle(forWritingTo: outURL), let err = try? FileHandle(forWritingTo: errURL) else { return nil }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    process.waitUntilExit()
    try? out.close()
    try? err.close()
    let stdout = (try? Data(contentsOf: outURL)) ?? Data()
    let stderr = (try? Data(contentsOf: errURL)) ?? Data()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// The first of `names` found on PATH.
func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built binary (`swift build` first), or `MOON_BIN`.
    static var moon: String {
        ProcessInfo.processInfo.environment["MOON_BIN"] ?? root.appendingPathComponent(".build/debug/moon").path
    }

    static var hasMoon: Bool { FileManager.default.isExecutableFile(atPath: moon) }
}
