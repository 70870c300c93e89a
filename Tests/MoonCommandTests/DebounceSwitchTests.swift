import Foundation
import MoonCommand
import Testing

@Suite("debounce and switch-to-latest, on virtual time")
struct DebounceSwitchTests {
    @Test("a burst of values gives one, after the interval of quiet")
    func debounceBurst() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.debounce(.milliseconds(100), on: scheduler).start(recorder.observer)
        for value in 1...200 {
            subject.send(next: value)
            scheduler.advance(by: .milliseconds(1))
        }
        #expect(recorder.values.isEmpty)
        scheduler.advance(by: .milliseconds(98))
        #expect(recorder.values.isEmpty)          // 99 ms after the last value
        scheduler.advance(by: .milliseconds(1))
        #expect(recorder.values == [200])
        scheduler.advance(by: .seconds(10))
        #expect(recorder.values == [200])
    }

    @Test("each value restarts the wait; separate bursts give separate values")
    func debounceRestarts() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.debounce(.seconds(1), on: scheduler).start(recorder.observer)
        subject.send(next: 1)
        scheduler.advance(by: .milliseconds(900))
        subject.send(next: 2)
        scheduler.advance(by: .milliseconds(900))
        #expect(recorder.values.isEmpty)
        scheduler.advance(by: .milliseconds(100))
        #expect(recorder.values == [2])
        subject.send(next: 3)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.values == [2, 3])
    }

    @Test("merge folds a burst: path sets become their union")
    func debounceMerges() {
        let scheduler = TestScheduler()
        let subject = Subject<Set<String>>()
        let recorder = Recorder<Set<String>>()
        subject.signal.debounce(.milliseconds(100), on: scheduler, merge: { $0.union($1) }).start(recorder.observer)
        subject.send(next: ["a"])
        subject.send(next: ["b", "a"])
        scheduler.advance(by: .milliseconds(50))
        subject.send(next: ["c"])
        scheduler.advance(by: .milliseconds(100))
        #expect(recorder.values == [["a", "b", "c"]])
    }

    @Test("completion flushes the waiting value; an error drops it; disposal cancels the timer")
    func debounceEnds() {
        let scheduler = TestScheduler()
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        subject.signal.debounce(.seconds(1), on: scheduler).start(recorder.observer)
        subject.send(next: 1)
        subject.sendCompleted()
        #expect(recorder.log == ["next(1)", "completed"])

        let failing = Subject<Int>()
        let failed = Recorder<Int>()
        failing.signal.debounce(.seconds(1), on: scheduler).start(failed.observer)
        failing.send(next: 1)
        failing.send(error: TestError(id: 1))
        scheduler.advance(by: .seconds(2))
        #expect(failed.log == ["error(TestError(1))"])

        let disposed = Subject<Int>()
        let quiet = Recorder<Int>()
        let subscription = disposed.signal.debounce(.seconds(1), on: scheduler).start(quiet.observer)
        disposed.send(next: 1)
        subscription.dispose()
        scheduler.advance(by: .seconds(2))
        #expect(quiet.events.isEmpty)
        #expect(scheduler.pendingCount == 0)
    }

    /// An inner signal that sends `tag` after `delay` and completes, counting
    /// its disposals (a run that is cancelled).
    final class Runs: @unchecked Sendable {
        let lock = NSLock()
        var started: [String] = []
        var disposed: [String] = []

        func run(_ tag: String, after delay: Duration, on scheduler: TestScheduler) -> Signal<String> {
            Signal { observer, lifetime in
                self.lock.withLock { self.started.append(tag) }
                lifetime.add { self.lock.withLock { self.disposed.append(tag) } }
                lifetime.add(scheduler.schedule(after: delay) {
                    observer.send(next: tag)
                    observer.sendCompleted()
                })
            }
        }
    }

    @Test("latest: a new value cancels the running inner signal and starts the new one")
    func latestCancelsStale() {
        let scheduler = TestScheduler()
        let subject = Subject<String>()
        let recorder = Recorder<String>()
        let runs = Runs()
        subject.signal.flatMap(.latest) { runs.run($0, after: .seconds(1), on: scheduler) }.start(recorder.observer)
        subject.send(next: "a")
        scheduler.advance(by: .milliseconds(500))
        subject.send(next: "b")                 // a is stale: cancelled
        #expect(runs.disposed == ["a"])
        scheduler.advance(by: .milliseconds(600))
        #expect(recorder.values.isEmpty)        // a never sends
        scheduler.advance(by: .milliseconds(400))
        #expect(recorder.values == ["b"])
        subject.send(next: "c")                 // b already ended: nothing to cancel
        scheduler.advance(by: .seconds(1))
        #expect(recorder.values == ["b", "c"])
        #expect(runs.started == ["a", "b", "c"])
    }

    @Test("latest completes when the outer and the current inner have completed")
    func latestCompletion() {
        let scheduler = TestScheduler()
        let subject = Subject<String>()
        let recorder = Recorder<String>()
        let runs = Runs()
        subject.signal.flatMap(.latest) { runs.run($0, after: .seconds(1), on: scheduler) }.start(recorder.observer)
        subject.send(next: "a")
        subject.sendCompleted()
        #expect(!recorder.isTerminated)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.log == ["next(a)", "completed"])
    }

    @Test("latest: an inner error fails the whole; disposal disposes the running inner")
    func latestErrorAndDisposal() {
        let scheduler = TestScheduler()
        let subject = Subject<String>()
        let recorder = Recorder<String>()
        subject.signal.flatMap(.latest) { _ in Signal<String>.error(TestError(id: 7)) }.start(recorder.observer)
        subject.send(next: "x")
        #expect(recorder.log == ["error(TestError(7))"])
        #expect(subject.observerCount == 0)

        let outer = Subject<String>()
        let runs = Runs()
        let subscription = outer.signal.flatMap(.latest) { runs.run($0, after: .seconds(1), on: scheduler) }
            .start(Recorder<String>().observer)
        outer.send(next: "a")
        subscription.dispose()
        #expect(runs.disposed == ["a"])
        #expect(outer.observerCount == 0)
    }

    @Test("merge and concat strategies are the width-limited flatMap")
    func otherStrategies() {
        let scheduler = TestScheduler()
        let subject = Subject<String>()
        let recorder = Recorder<String>()
        let runs = Runs()
        subject.signal.flatMap(.concat) { runs.run($0, after: .seconds(1), on: scheduler) }.start(recorder.observer)
        subject.send(next: "a")
        subject.send(next: "b")
        #expect(runs.started == ["a"])
        scheduler.advance(by: .seconds(2))
        #expect(recorder.values == ["a", "b"])
    }
}
