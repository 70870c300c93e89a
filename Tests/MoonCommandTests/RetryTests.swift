import MoonCommand
import Testing

@Suite struct RetryTests {
    /// Fails the first `failures` starts, then sends its attempt number.
    func flaky(failures: Int) -> (Signal<Int>, () -> Int) {
        nonisolated(unsafe) var attempts = 0
        let signal = Signal<Int> { observer, _ in
            attempts += 1
            observer.send(next: attempts * 100)
            if attempts <= failures { observer.send(error: TestError(id: attempts)) } else { observer.sendCompleted() }
        }
        return (signal, { attempts })
    }

    @Test func retriesAtOnceUpToCount() {
        let (signal, attempts) = flaky(failures: 2)
        let recorder = Recorder<Int>()
        signal.retry(upTo: 2).start(recorder.observer)
        #expect(attempts() == 3)
        #expect(recorder.log == ["next(100)", "next(200)", "next(300)", "completed"])
    }

    @Test func givesUpWithTheLastError() {
        let (signal, attempts) = flaky(failures: 5)
        let recorder = Recorder<Int>()
        signal.retry(upTo: 1).start(recorder.observer)
        #expect(attempts() == 2)
        #expect(recorder.events.last?.description == "error(TestError(2))")
    }

    @Test func waitsWithBackoffCappedByMaxDelay() {
        let scheduler = TestScheduler()
        let (signal, attempts) = flaky(failures: 3)
        nonisolated(unsafe) var waits: [Duration] = []
        let recorder = Recorder<Int>()
        signal.retry(RetryPolicy(times: 3, delay: .seconds(1), backoff: 2, maxDelay: .seconds(3)), on: scheduler) { attempt, wait, _ in
            waits.append(wait)
        }.start(recorder.observer)
        #expect(attempts() == 1)
        scheduler.advance(by: .seconds(0.999))
        #expect(attempts() == 1)
        scheduler.advance(by: .seconds(0.001))
        #expect(attempts() == 2)
        scheduler.advance(by: .seconds(2))
        #expect(attempts() == 3)
        scheduler.advance(by: .seconds(2.9))
        #expect(attempts() == 3)
        scheduler.advance(by: .seconds(0.1))
        #expect(attempts() == 4)
        #expect(waits == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(recorder.events.last?.description == "completed")
    }

    @Test func disposingDuringTheWaitCancelsTheRetry() {
        let scheduler = TestScheduler()
        let (signal, attempts) = flaky(failures: 3)
        let subscription = signal.retry(upTo: 3, delay: .seconds(1), on: scheduler).start { _ in }
        subscription.dispose()
        scheduler.run()
        #expect(attempts() == 1)
    }
}
