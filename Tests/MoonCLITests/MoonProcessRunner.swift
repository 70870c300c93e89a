import Foundation
import MoonEvents
import MoonReport
import Testing

/// Runs the built `moon` binary (the end-to-end tests never call moon's
/// code directly): a graph file written to a fresh directory, the arguments,
/// and what came back — stdout, stderr and the exit status. The directory is
/// removed when the test lets go of it, so `make test` leaves nothing in /tmp.
final class Moon {
    /// The repository root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `.build/debug/moon`, or `MOON_BIN` when set (e.g. a release build).
    static var binary: String {
        if let bin = ProcessInfo.processInfo.environment["MOON_BIN"] { return bin }
        return root.appendingPathComponent(".build/debug/moon").path
    }

    struct Result {
        var stdout: String
        var stderr: String
        var status: Int32

        /// The events of `--json` on stdout, typed.
        var events: [RunEvent] { Moon.events(in: stdout).map(\.event) }

        /// The events named `name` (`"next"`, `"graph-complete"`), of `node` when given.
        func events(_ name: String, node: String? = nil) -> [RunEvent] {
            events.filter { $0.name == name && (node == nil || $0.node == node) }
        }

        /// How `node` ended: "ran", its skip reason ("up-to-date", "cache-hit"…), or "?" (neither).
        func outcome(_ node: String) -> String {
            if let reason = events("skip", node: node).first?.reason { return reason.rawValue }
            return events("complete", node: node).isEmpty ? "?" : "ran"
        }

        /// The lines `node` printed on stdout.
        func printed(_ node: String) -> [String] {
            events("next", node: node).filter { $0.stream == .stdout }.compactMap(\.text)
        }

        /// The error `node` failed with.
        func error(of node: String) -> NodeError? { events("error", node: node).first?.error }
    }

    /// The events of a JSON Lines text, decoded as `moon replay` decodes
    /// them: the tests' one door to the stream, so a field they read is one
    /// the decoder knows, and a line it cannot read fails the test. Lines
    /// that are no JSON object (human output on the same stream) are passed
    /// over, and so is a last line still being written (no newline yet).
    static func events(in text: String) -> [(seq: Int, event: RunEvent)] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if !text.hasSuffix("\n") { lines.removeLast() }
        var events: [(seq: Int, event: RunEvent)] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("{") {
            do {
                if let decoded = try EventDecoder.decodeLine(String(line), line: index + 1) {
                    events.append((decoded.seq, decoded.event))
                }
            } catch {
                Issue.record("moon wrote an event `moon replay` cannot read: \(error)\n\(line)")
            }
        }
        return events
    }

    /// A temporary directory holding `moon.yaml` with `graph` as its text.
    let directory: URL

    init(graph: String? = nil, file: String = "moon.yaml") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let graph { try write(file, graph) }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    /// Writes an executable `name`. The descriptor is close-on-exec: a
    /// process the test process starts meanwhile (a tmux server lives on)
    /// would otherwise keep it open for writing, and running the file would
    /// then fail with "Text file busy".
    func writeExecutable(_ name: String, _ text: String) throws {
        let fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path(name)]) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path(name)])
        }
        fchmod(fd, 0o755)
    }

    /// Makes `name` (a path below the directory) and its parents.
    func makeDirectory(_ name: String) throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
    }

    func read(_ name: String) -> String? {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs moon to completion (at most `limit` seconds, then it is killed and the test fails).
    @discardableResult
    /// `in`: a subdirectory of the test's directory to run moon in.
    func run(_ arguments: [String], environment: [String: String] = [:], limit: TimeInterval = 60,
             in subdirectory: String? = nil) throws -> Result {
        let process = try start(arguments, environment: environment, in: subdirectory)
        return try process.wait(limit: limit)
    }

    func start(_ arguments: [String], environment: [String: String] = [:], in subdirectory: String? = nil) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moon.binary)
        process.arguments = arguments
        process.currentDirectoryURL = subdirectory.map { directory.appendingPathComponent($0) } ?? directory
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        // Each test's own output cache: identical graphs of two tests would share entries.
        env["MOON_CACHE_DIR"] = directory.appendingPathComponent(".cache").path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = directory.appendingPathComponent(".stdout-\(UUID().uuidString)")
        let err = directory.appendingPathComponent(".stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        return try Running(launching: process, out: out, err: err)
    }

    final class Running {
        let process: Process
        let out: URL
        let err: URL
        /// Signalled once by the process's termination handler.
        private let exited = DispatchSemaphore(value: 0)

        /// Runs `process`, its output going to `out` and `err`. The
        /// termination handler is set before the launch, so an exit that
        /// comes at once is not missed.
        init(launching process: Process, out: URL, err: URL) throws {
            self.process = process
            self.out = out
            self.err = err
            let exited = self.exited
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
        }

        var pid: Int32 { process.processIdentifier }

        /// The events moon has written so far (it may still run).
        var events: [RunEvent] {
            Moon.events(in: (try? String(contentsOf: out, encoding: .utf8)) ?? "").map(\.event)
        }

        /// The status read by `reapIfForgotten`, when Foundation never saw the exit.
        private var ownStatus: Int32?

        /// Whether the process exited within `limit` seconds. The handler
        /// wakes the wait at once; Foundation may run it late on a loaded
        /// machine, so the process's own state is looked at between slices.
        /// A child that stays a zombie for a second without Foundation
        /// noticing (its SIGCHLD lost to a thread that blocks it, in a test
        /// process that also runs the launcher's own tests) is reaped here.
        private func waitForExit(_ limit: TimeInterval) -> Bool {
            let deadline = Date().addingTimeInterval(limit)
            var zombieSince: Date?
            while Date() < deadline {
                if exited.wait(timeout: .now() + 0.05) == .success { return true }
                if !process.isRunning { return true }
                if Self.isZombie(pid) {
                    let since = zombieSince ?? Date()
                    zombieSince = since
                    if Date().timeIntervalSince(since) > 1, reapIfForgotten() { return true }
                } else {
                    zombieSince = nil
                }
            }
            return !process.isRunning || reapIfForgotten()
        }

        /// Reaps the child itself; true when it did.
        private func reapIfForgotten() -> Bool {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return false }
            // As Foundation reports it: the exit code, or the signal's number.
            ownStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            return true
        }

        /// Whether `/proc/PID/stat` says the process is a zombie.
        private static func isZombie(_ pid: Int32) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[close...].dropFirst(2).first == "Z"
        }

        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// Blocks until the process has exited (at most `limit` seconds; then
        /// it gets SIGTERM, after 10 s more SIGKILL, and the test fails).
        func wait(limit: TimeInterval = 60) throws -> Result {
            if !waitForExit(limit) {
                Issue.record("moon did not finish within \(limit)s")
                process.terminate()
                if !waitForExit(10) {
                    kill(process.processIdentifier, SIGKILL)
                    _ = waitForExit(3600)
                }
            }
            exited.signal()  // a second wait returns at once
            if ownStatus == nil { process.waitUntilExit() }
            let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            return Result(stdout: stdout, stderr: stderr, status: ownStatus ?? process.terminationStatus)
        }
    }
}

/// Waits (polling) until `condition` holds; false after `limit` seconds.
func eventually(_ limit: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(limit)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// Whether `pid` is alive (not a zombie) and still one of `moon`'s test's
/// processes. Pids are reused (pid_max is 32768 here, and the suite starts
/// thousands of processes a second), so a pid read from a file may name
/// another process seconds later. A node, and whatever it starts, carries
/// `MOON_GRAPH_DIR`, which names the test's own directory. A process in
/// the middle of `exec` shows an empty environment for a moment: that is
/// no proof it is another process.
func isAlive(_ pid: Int32, of moon: Moon) -> Bool {
    guard isAlive(pid) else { return false }
    guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"), !environment.isEmpty else { return true }
    return String(decoding: environment, as: UTF8.self).contains(moon.directory.lastPathComponent)
}

/// Whether a process with this pid is alive (and not a zombie).
func isAlive(_ pid: Int32) -> Bool {
    guard pid > 0, kill(pid, 0) == 0 else { return false }
    if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
       let close = stat.lastIndex(of: ")") {
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z"
    }
    return true
}

/// Runs `script` with `sh -c` (or bash) in the test's directory, with
/// `$MOON` set to the binary and `environment` added.
func shell(_ script: String, in moon: Moon, bash: Bool = false, environment extra: [String: String] = [:],
           limit: TimeInterval = 60) throws -> Moon.Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: bash ? "/bin/bash" : "/bin/sh")
    process.arguments = ["-c", script]
    process.currentDirectoryURL = moon.directory
    var environment = ProcessInfo.processInfo.environment
    environment["MOON"] = Moon.binary
    environment["NO_COLOR"] = "1"
    environment["MOON_CACHE_DIR"] = moon.directory.appendingPathComponent(".cache").path
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let out = moon.directory.appendingPathComponent(".sh-out-\(UUID().uuidString)")
    let err = moon.directory.appendingPathComponent(".sh-err-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = FileHandle.nullDevice
    return try Moon.Running(launching: process, out: out, err: err).wait(limit: limit)
}
