import Dispatch
import Testing
import MoonCommand
import MoonSystem
@testable import MoonProcess

/// `SharedJob`: done once, by whichever thread comes first; the others get
/// its value.
@Suite struct SharedJobTests {
    final class Counter: @unchecked Sendable {
        private let lock = Lock()
        private var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
        var value: Int { lock.withLock { count } }
    }

    @Test func theThreadThatNeedsTheValueDoesTheJobWhenNoHelperTookIt() {
        let runs = Counter()
        let job = SharedJob { runs.next() }
        #expect(job.value == 1)
        job.runIfFree()
        #expect(job.value == 1)
        #expect(runs.value == 1)
    }

    @Test func aJobTakenByAHelperIsWaitedForNotDoneTwice() {
        let runs = Counter()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let job = SharedJob { () -> String in
            _ = runs.next()
            started.signal()
            release.wait()
            return "helper's"
        }
        #expect(BackgroundThread.start { job.runIfFree() })
        started.wait()
        // The helper holds the job: `value` must wait for it, not run it again.
        let got = Counter()
        let reader = DispatchSemaphore(value: 0)
        #expect(BackgroundThread.start {
            if job.value == "helper's" { _ = got.next() }
            reader.signal()
        })
        #expect(reader.wait(timeout: .now() + 0.2) == .timedOut)
        release.signal()
        reader.wait()
        #expect(got.value == 1)
        #expect(runs.value == 1)
    }
}
