import Dispatch
import Foundation
import Glibc
@testable import MoonProcess
import MoonSystem

/// Collects one process's callbacks and lets a test await them, with a
/// timeout that only guards against hangs.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storedLines: [OutputLine] = []
    /// Lines still being written (`partial`), kept apart: `lines` has every byte once.
    private var partialLines: [OutputLine] = []
    private var storedTermination: Termination?
    private var storedExitTime: ContinuousClock.Instant?
    private var exitCalls = 0
    private var outputAfterExit = 0
    private var exitWaiters: [CheckedContinuation<Termination?, Never>] = []
    private var lineWaiters: [(id: Int, predicate: (OutputLine) -> Bool, continuation: CheckedContinuation<OutputLine?, Never>)] = []
    private var nextWaiter = 0

    var lines: [OutputLine] { lock.withLock { storedLines } }
    var partials: [OutputLine] { lock.withLock { partialLines } }
    var exitCount: Int { lock.withLock { exitCalls } }
    /// When the launcher reported the exit, read on the launcher's own thread:
    /// unlike the time an awaiting test resumes, it does not include waiting
    /// for a free thread of the test runner's pool behind other tests.
    var exitTime: ContinuousClock.Instant? { lock.withLock { storedExitTime } }
    var linesAfterExit: Int { lock.withLock { outputAfterExit } }
    func texts(_ stream: OutputLine.Stream) -> [String] {
        lines.filter { $0.stream == stream }.map(\.text)
    }

    func onOutput(_ line: OutputLine) {
        if line.partial {
            lock.withLock { partialLines.append(line) }
            return
        }
        let ready: [CheckedContinuation<OutputLine?, Never>] = lock.withLock {
            if exitCalls > 0 { outputAfterExit += 1 }
            storedLines.append(line)
            let matched = lineWaiters.filter { $0.predicate(line) }
            lineWaiters.removeAll { $0.predicate(line) }
            return matched.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: line) }
    }

    func onExit(_ termination: Termination) {
        let ready: [CheckedContinuation<Termination?, Never>] = lock.withLock {
            exitCalls += 1
            storedTermination = termination
            storedExitTime = ContinuousClock.now
            defer { exitWaiters.removeAll() }
            return exitWaiters
        }
        ready.forEach { $0.resume(returning: termination) }
    }

    /// The termination, or nil after `timeout` (a hang guard).
    func termination(timeout: Duration = .seconds(20)) async -> Termination? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Termination?, Never>) in
            let done: Termination? = lock.withLock {
                if let storedTermination { return storedTermination }
                exitWaiters.append(continuation)
                return nil
            }
            if let done {
                continuation.resume(returning: done)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds) { [self] in
                let timedOut: [CheckedContinuation<Termination?, Never>] = lock.withLock {
                    defer { exitWaiters.removeAll() }
                    return exitWaiters
                }
                timedOut.forEach { $0.resume(returning: nil) }
            }
        }
    }

    /// The first line matching `predicate` (already seen or still to come).
    func line(timeout: Duration = .seconds(20), where predicate: @escaping (OutputLine) -> Bool) async -> OutputLine? {
        await withCheckedContinuation { (continuation: CheckedContinuation<OutputLine?, Never>) in
            var id = 0
            let seen: OutputLine? = lock.withLock {
                if let line = storedLines.first(where: predicate) { return line }
                nextWaiter += 1
                lineWaiters.append((nextWaiter, predicate, continuation))
                id = nextWaiter
                return nil
            }
            if let seen {
                continuation.resume(returning: seen)
                return
            }
            let waiter = id
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds) { [self] in
                let id = waiter
                let timedOut: [CheckedContinuation<OutputLine?, Never>] = lock.withLock {
                    let pending = lineWaiters.filter { $0.id == id }.map(\.continuation)
                    lineWaiters.removeAll { $0.id == id }
                    return pending
                }
                timedOut.forEach { $0.resume(returning: nil) }
            }
        }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The tests' one launcher, on a loop of its own.
let launcher = ProcessLauncher()

let testEnvironment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C"]

func shell(_ script: String, environment: [String: String] = testEnvironment, directory: String? = nil) -> ProcessSpec {
    ProcessSpec(executable: "/bin/sh", arguments: ["-c", script], environment: environment, workingDirectory: directory)
}

/// Starts `spec` and returns its recorder and handle.
func start(_ spec: ProcessSpec) throws -> (Recorder, any ProcessHandle) {
    let recorder = Recorder()
    let handle = try launcher.launch(spec, onOutput: { recorder.onOutput($0) }, onExit: { recorder.onExit($0) })
    return (recorder, handle)
}

/// Runs `spec` to completion.
func run(_ spec: ProcessSpec) async throws -> (Recorder, Termination?) {
    let (recorder, _) = try start(spec)
    return (recorder, await recorder.termination())
}

/// A temporary directory, removed by the caller with `removeItem`.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "moon-process-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// True when `pid` no longer runs: gone, or a zombie waiting to be reaped.
func isDead(_ pid: pid_t) -> Bool {
    if Glibc.kill(pid, 0) != 0 && errno == ESRCH { return true }
    let stat = LinuxCalls.readSmallFile("/proc/\(pid)/stat")
    guard let close = stat.lastIndex(of: ")") else { return true }
    let state = stat[stat.index(close, offsetBy: 2)]
    return state == "Z" || state == "X"
}

/// Waits (bounded) until `pid` is dead: SIGKILL is delivered asynchronously,
/// so a killed process may need a moment to finish dying.
func becomesDead(_ pid: pid_t, within limit: Duration = .seconds(15)) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if isDead(pid) { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return isDead(pid)
}

/// nil when equal; otherwise a short description of the first difference
/// (comparing 100,000 lines with `==` would print them all).
func firstDifference(_ actual: [String], _ expected: [String]) -> String? {
    for (index, (a, e)) in zip(actual, expected).enumerated() where a != e {
        return "line \(index): got \(a.prefix(80)), expected \(e.prefix(80))"
    }
    if actual.count != expected.count { return "got \(actual.count) lines, expected \(expected.count)" }
    return nil
}

/// A script that starts `sleep 1000` in a new session (out of the node's
/// process group), waits until it runs, and prints its pid.
let detachedSleepScript = #"""
d=$(mktemp -d); setsid sh -c "echo \$\$ > $d/pid; exec sleep 1000" &
while [ ! -s "$d/pid" ]; do :; done; cat "$d/pid"; rm -r "$d"
"""#

/// Collects values from several threads.
final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []
    func append(_ element: Element) { lock.withLock { storage.append(element) } }
    var all: [Element] { lock.withLock { storage } }
}
