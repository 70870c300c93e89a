import Dispatch
import Foundation
import Glibc
import Testing
@testable import MoonEventLoop
import MoonProcess

/// The launcher's thread as moon's event loop: posted work and timers run
/// there, in order, and a process launched from the loop reports back on it.
@Suite struct EventLoopTests {
    /// Waits (as a hang guard only) until `done` is signalled.
    private func wait(_ done: DispatchSemaphore) -> Bool {
        done.wait(timeout: .now() + 20) == .success
    }

    @Test func postedWorkRunsOnTheLoopInOrder() throws {
        let loop = try launcher.eventLoop()
        #expect(!loop.isCurrent)
        let lock = NSLock()
        var seen: [Int] = []
        var onLoop: [Bool] = []
        let done = DispatchSemaphore(value: 0)
        for i in 0..<100 {
            loop.post {
                lock.withLock {
                    seen.append(i)
                    onLoop.append(loop.isCurrent)
                }
                if i == 99 { done.signal() }
            }
        }
        #expect(wait(done))
        lock.withLock {
            #expect(seen == Array(0..<100))
            #expect(onLoop.allSatisfy { $0 })
        }
    }

    /// Work posted from the loop runs after the work already posted, in the
    /// same turn (before the loop polls again), without a wake-up.
    @Test func workPostedFromTheLoopRunsAfterwardsInTheSameTurn() throws {
        let loop = try launcher.eventLoop()
        let lock = NSLock()
        var order: [String] = []
        let done = DispatchSemaphore(value: 0)
        loop.post {
            loop.post {
                lock.withLock { order.append("inner") }
                done.signal()
            }
            lock.withLock { order.append("outer") }
        }
        #expect(wait(done))
        lock.withLock { #expect(order == ["outer", "inner"]) }
    }

    @Test func timersFireInDeadlineOrder() throws {
        let loop = try launcher.eventLoop()
        let lock = NSLock()
        var fired: [Int] = []
        let done = DispatchSemaphore(value: 0)
        let began = DispatchTime.now()
        loop.post(afterNanoseconds: 60_000_000) {
            lock.withLock { fired.append(60) }
            done.signal()
        }
        loop.post(afterNanoseconds: 20_000_000) { lock.withLock { fired.append(20) } }
        loop.post(afterNanoseconds: 40_000_000) { lock.withLock { fired.append(40) } }
        #expect(wait(done))
        // Never early (a lower bound, not a timing assertion).
        #expect(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds >= 60_000_000)
        lock.withLock { #expect(fired == [20, 40, 60]) }
    }

    /// A process launched from the loop reports its output and exit on the
    /// loop, and the next process can be launched right there.
    @Test func aLaunchFromTheLoopReportsOnTheLoop() throws {
        let loop = try launcher.eventLoop()
        let log = Log()
        let done = DispatchSemaphore(value: 0)
        @Sendable func start(_ n: Int) {
            let spec = ProcessSpec(executable: "/bin/sh", arguments: ["-c", "echo run \(n)"])
            do {
                _ = try launcher.launch(spec, onOutput: { line in
                    log.append("\(line.text) on loop: \(loop.isCurrent)")
                }, onExit: { termination in
                    log.append("exit \(n) \(termination == .exited(0) ? "ok" : "\(termination)") on loop: \(loop.isCurrent)")
                    if n < 3 {
                        loop.post { start(n + 1) }
                    } else {
                        done.signal()
                    }
                })
            } catch {
                log.append("failed: \(error)")
                done.signal()
            }
        }
        loop.post { start(1) }
        #expect(wait(done))
        #expect(log.items == [
            "run 1 on loop: true", "exit 1 ok on loop: true",
            "run 2 on loop: true", "exit 2 ok on loop: true",
            "run 3 on loop: true", "exit 3 ok on loop: true",
        ])
    }

    /// A program still open for writing (ETXTBSY) is retried on the loop's
    /// timers, never by sleeping on the loop: a timer due meanwhile fires,
    /// and when it closes the writer the retried launch starts the program.
    @Test func aBusyProgramIsRetriedOnTheLoopWhileTimersGoOn() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = directory + "/script"
        try "#!/bin/sh\necho ran\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let writer = open(script, O_WRONLY | O_APPEND | O_CLOEXEC)
        try #require(writer >= 0)
        let loop = try launcher.eventLoop()
        let log = Log()
        let done = DispatchSemaphore(value: 0)
        let spec = ProcessSpec(executable: script, environment: testEnvironment)
        @Sendable func launch() throws {
            _ = try launcher.launch(spec, onOutput: { log.append($0.text) }, onExit: { termination in
                log.append("exit \(termination)")
                done.signal()
            })
        }
        loop.post {
            do {
                try launch()
                log.append("started at once")
                return
            } catch let error as ProcessLaunchError where error.kind == .outOfResources && error.errno == ETXTBSY {
                log.append("busy")
            } catch {
                log.append("failed: \(error)")
                done.signal()
                return
            }
            loop.post(afterNanoseconds: 1_000_000) {
                log.append("timer")
                close(writer)
            }
            let queued = launcher.waitForResources { giveUp in
                if giveUp {
                    log.append("gave up")
                    done.signal()
                    return true
                }
                do {
                    try launch()
                    return true
                } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                    return false
                } catch {
                    log.append("failed: \(error)")
                    done.signal()
                    return true
                }
            }
            if !queued {
                log.append("not queued")
                done.signal()
            }
        }
        #expect(wait(done))
        #expect(log.items == ["busy", "timer", "ran", "exit exit 0"])
    }

    @Test func theTimerHeapPopsEarliestFirstAndTiesInArrivalOrder() {
        var heap = TimerHeap()
        var popped: [String] = []
        let deadlines: [(UInt64, String)] = [(50, "a"), (10, "b"), (30, "c"), (10, "d"), (70, "e"), (30, "f"), (5, "g")]
        for (deadline, name) in deadlines {
            heap.push(deadline) { popped.append(name) }
        }
        #expect(heap.nextDeadline == 5)
        while let action = heap.popDue(now: 40) { action() }
        #expect(popped == ["g", "b", "d", "c", "f"])
        #expect(heap.nextDeadline == 50)
        while let action = heap.popDue(now: 100) { action() }
        #expect(popped == ["g", "b", "d", "c", "f", "a", "e"])
        #expect(heap.nextDeadline == nil)
    }
}

/// Lines appended from any thread.
private final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var items: [String] { lock.withLock { stored } }
    func append(_ item: String) { lock.withLock { stored.append(item) } }
}
