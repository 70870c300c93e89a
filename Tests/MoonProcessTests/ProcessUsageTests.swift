import Foundation
import Glibc
import Testing
@testable import MoonProcess

/// What a child's process tree used (`ProcessUsage`, from `wait4`): CPU adds
/// up, the peak is the largest one process reached; the leader's figures
/// include the descendants it waited for. Group members that moon reaps as
/// their subreaper are counted toward the node their group names: see
/// `IsolatedScenarioTests.usageScenario`.
@Suite struct ProcessUsageTests {
    @Test func cpuAddsUpAndThePeakIsTheLargest() {
        var usage = ProcessUsage()
        var first = rusage()
        first.ru_utime = timeval(tv_sec: 1, tv_usec: 250_000)
        first.ru_stime = timeval(tv_sec: 0, tv_usec: 10)
        first.ru_maxrss = 2048
        var second = rusage()
        second.ru_utime = timeval(tv_sec: 0, tv_usec: 750_000)
        second.ru_stime = timeval(tv_sec: 2, tv_usec: 0)
        second.ru_maxrss = 1024
        usage.add(first)
        usage.add(second)
        #expect(usage == ProcessUsage(userMicroseconds: 2_000_000, systemMicroseconds: 2_000_010, maxResidentBytes: 2048 * 1024))
        usage.add(ProcessUsage(userMicroseconds: 1, systemMicroseconds: 1, maxResidentBytes: 4 << 20))
        #expect(usage == ProcessUsage(userMicroseconds: 2_000_001, systemMicroseconds: 2_000_011, maxResidentBytes: 4 << 20))
    }

    /// (A child's peak is at least what its parent held when it forked:
    /// the kernel counts the parent's memory in it until it execs. This
    /// test process holds less than 150 MiB.)
    @Test func theLeaderCountsTheDescendantsItWaitedFor() async throws {
        let usage = try await runMeasured(shell("sh -c '\(allocating(200)); true'; true"))
        #expect(usage.maxResidentBytes >= 200 << 20, "\(usage)")
        #expect(usage.userMicroseconds + usage.systemMicroseconds > 0, "\(usage)")
    }
}

/// `python3` holding `mebibytes` MiB, every byte written, then running `then`
/// (Python without quotes, so the command nests in any quoting).
func allocating(_ mebibytes: Int, then: String = "") -> String {
    "python3 -c \"b = bytes(range(256)) * (\(mebibytes) << 12)\(then.isEmpty ? "" : "; " + then)\""
}

/// Runs `spec` to its end and returns what its tree used.
func runMeasured(_ spec: ProcessSpec) async throws -> ProcessUsage {
    try await withCheckedThrowingContinuation { continuation in
        do {
            _ = try launcher.launch(spec, onOutput: { _ in }, onExitWithUsage: { _, usage in
                continuation.resume(returning: usage ?? ProcessUsage())
            })
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
