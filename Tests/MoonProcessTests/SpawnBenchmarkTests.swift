import Foundation
import Testing
import MoonProcess

/// Spawn cost, only when `MOON_PROCESS_BENCH=1` (run it in release:
/// `MOON_PROCESS_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter SpawnBenchmark`).
@Suite struct SpawnBenchmarkTests {
    private static let enabled = ProcessInfo.processInfo.environment["MOON_PROCESS_BENCH"] == "1"
    private static let count = 1000

    /// Runs `count` `/bin/true` with at most `inFlight` at once; returns ms per process.
    private func measure(inFlight: Int) async throws -> Double {
        let spec = ProcessSpec(executable: "/bin/true", environment: ["PATH": "/usr/bin:/bin"])
        let began = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<inFlight {
                group.addTask {
                    var index = lane
                    while index < Self.count {
                        let recorder = Recorder()
                        _ = try launcher.launch(spec, onOutput: { recorder.onOutput($0) }, onExit: { recorder.onExit($0) })
                        let termination = await recorder.termination()
                        #expect(termination == .exited(0))
                        index += inFlight
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - began
        return elapsed.seconds * 1000 / Double(Self.count)
    }

    @Test(.enabled(if: enabled)) func thousandTrueProcesses() async throws {
        _ = try await measure(inFlight: 1)  // warm up
        let serial = try await measure(inFlight: 1)
        let two = try await measure(inFlight: 2)
        print(String(format: "spawn benchmark: 1 in flight %.3f ms/process, 2 in flight %.3f ms/process (%.0f ms per 1000)", serial, two, two * 1000))
    }
}
