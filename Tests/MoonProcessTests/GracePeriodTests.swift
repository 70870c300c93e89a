import Glibc
import MoonCommand
@testable import MoonProcess
import Testing

/// A terminated child's grace period on virtual time: SIGTERM at once, and
/// SIGKILL when the process's grace scheduler reaches the end of the grace
/// (a `TestScheduler` here, moon's event loop in moon).
@Suite struct GracePeriodTests {
    private func flags(_ process: LaunchedProcess) -> (term: Bool, kill: Bool) {
        launcher.lock.withLock { _ in (process.termSent, process.killSent) }
    }

    @Test func sigkillComesExactlyWhenTheGraceEnds() async throws {
        let (recorder, handle) = try start(shell(#"trap '' TERM; echo ready; sleep 1000"#))
        #expect(await recorder.line { $0.text == "ready" } != nil)
        let process = try #require(handle as? LaunchedProcess)
        let scheduler = TestScheduler()
        process.graceScheduler = scheduler
        handle.terminate(grace: .seconds(5))
        #expect(flags(process) == (true, false), "SIGTERM at once")
        scheduler.advance(by: .milliseconds(4999))
        #expect(flags(process) == (true, false), "no SIGKILL before the grace ends")
        scheduler.advance(by: .milliseconds(1))
        #expect(flags(process) == (true, true), "SIGKILL as the grace ends")
        #expect(await recorder.termination() == .signaled(SIGKILL))
    }

    @Test func noSigkillForAProcessThatEndedWithinTheGrace() async throws {
        let (recorder, handle) = try start(shell("sleep 1000"))
        let process = try #require(handle as? LaunchedProcess)
        let scheduler = TestScheduler()
        process.graceScheduler = scheduler
        handle.terminate(grace: .seconds(5))
        #expect(await recorder.termination() == .signaled(SIGTERM))
        scheduler.advance(by: .seconds(10))
        #expect(flags(process) == (true, false))
    }
}
