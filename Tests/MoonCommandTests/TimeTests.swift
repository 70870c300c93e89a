import Foundation
import MoonCommand
import Testing

@Suite struct TimeoutTests {
    @Test func failsAndCancelsWhenTooSlow() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.timeout(after: .seconds(5), on: scheduler).start(recorder.observer)
        subject.send(next: 1)
        scheduler.advance(by: .seconds(4.9))
        #expect(!recorder.isTerminated)
        scheduler.advance(by: .seconds(0.1))
        #expect(recorder.log == ["next(1)", "error(timed out after 5.0s)"])
        #expect(recorder.events.last?.error as? SignalError == .timedOut(after: .seconds(5)))
        #expect(subject.disposals == 1, "the timed-out work is canceled")
    }

    @Test func completionInTimeCancelsTheTimer() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal.just(1).timeout(after: .seconds(1), raising: TestError(), on: scheduler).start(recorder.observer)
        scheduler.run()
        #expect(recorder.log == ["next(1)", "completed"])
        #expect(scheduler.pendingCount == 0)
    }
}

@Suite struct DelayTests {
    @Test func delaysValuesAndCompletion() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal(values: [1, 2]).delay(.seconds(2), on: scheduler).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .seconds(1.9))
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .seconds(0.1))
        #expect(recorder.log == ["next(1)", "next(2)", "completed"])
    }

    @Test func errorsAreNotDelayed() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.delay(.seconds(10), on: scheduler).start(recorder.observer)
        subject.send(next: 1)
        subject.send(error: TestError())
        scheduler.advance()
        #expect(recorder.log == ["error(TestError(0))"])
    }
}

@Suite struct ThrottleTests {
    @Test func sendsAtMostOnePerIntervalKeepingTheLatest() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.throttle(.seconds(1), on: scheduler).start(recorder.observer)
        subject.send(next: 1)             // t=0: at once
        subject.send(next: 2)
        subject.send(next: 3)             // latest of the window
        #expect(recorder.values == [1])
        scheduler.advance(by: .seconds(1))          // t=1: 3
        #expect(recorder.values == [1, 3])
        scheduler.advance(by: .seconds(5))          // quiet
        subject.send(next: 4)             // t=6: at once
        subject.send(next: 5)
        subject.sendCompleted()           // flushes 5
        #expect(recorder.log == ["next(1)", "next(3)", "next(4)", "next(5)", "completed"])
    }
}
