import Dispatch
import Foundation
import MoonCommand
import Testing

@Suite struct SignalTests {
    @Test func valuesThenCompletion() {
        let recorder = Recorder<Int>()
        Signal(values: [1, 2, 3]).start(recorder.observer)
        #expect(recorder.log == ["next(1)", "next(2)", "next(3)", "completed"])
    }

    @Test func nothingIsDeliveredAfterATerminalEvent() {
        let recorder = Recorder<Int>()
        let signal = Signal<Int> { observer, _ in
            observer.send(next: 1)
            observer.send(error: TestError())
            observer.send(next: 2)
            observer.sendCompleted()
            observer.send(error: TestError(id: 2))
        }
        signal.start(recorder.observer)
        #expect(recorder.log == ["next(1)", "error(TestError(0))"])
    }

    @Test func eachStartRunsTheWorkAnew() {
        nonisolated(unsafe) var runs = 0
        let signal = Signal<Int> { observer, _ in
            runs += 1
            observer.send(next: runs)
            observer.sendCompleted()
        }
        let first = Recorder<Int>(), second = Recorder<Int>()
        signal.start(first.observer)
        signal.start(second.observer)
        #expect(runs == 2)
        #expect(first.values == [1])
        #expect(second.values == [2])
    }

    @Test func terminationDisposesTheLifetime() {
        nonisolated(unsafe) var disposed = false
        let subscription = Signal<Int> { observer, lifetime in
            lifetime.add { disposed = true }
            observer.sendCompleted()
        }.start { _ in }
        #expect(disposed)
        #expect(subscription.isDisposed)
    }

    @Test func disposalStopsDeliveryAndRunsTeardown() {
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        let subscription = subject.signal.start(recorder.observer)
        subject.send(next: 1)
        subscription.dispose()
        subject.send(next: 2)
        subject.sendCompleted()
        #expect(recorder.log == ["next(1)"])
        #expect(subject.disposals == 1)
    }

    @Test func reentrantSendsAreQueuedNotRecursive() {
        // An observer that makes its own signal send again must not be
        // re-entered: the second event arrives after the first returns.
        nonisolated(unsafe) var depth = 0, maxDepth = 0
        nonisolated(unsafe) var sendAgain: ((Int) -> Void)?
        nonisolated(unsafe) var log: [Int] = []
        let signal = Signal<Int> { observer, _ in
            sendAgain = { observer.send(next: $0) }
            observer.send(next: 1)
        }
        signal.start { event in
            depth += 1
            maxDepth = max(maxDepth, depth)
            if let value = event.value {
                log.append(value)
                if value < 3 { sendAgain?(value + 1) }
            }
            depth -= 1
        }
        #expect(log == [1, 2, 3])
        #expect(maxDepth == 1)
    }

    @Test func concurrentSendersAreDeliveredSerially() {
        let lock = NSLock()
        nonisolated(unsafe) var inside = 0, overlaps = 0, count = 0
        let signal = Signal<Int> { observer, _ in
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for i in 0..<2_000 { observer.send(next: thread * 10_000 + i) }
            }
            observer.sendCompleted()
        }
        let recorder = Recorder<Int>()
        signal.start { event in
            lock.lock(); inside += 1; if inside > 1 { overlaps += 1 }; lock.unlock()
            if case .next = event { count += 1 } // unsynchronised on purpose: TSan checks seriality
            lock.lock(); inside -= 1; lock.unlock()
            recorder.observer.send(event)
        }
        #expect(recorder.waitForTerminal())
        #expect(overlaps == 0)
        #expect(count == 16_000)
    }

    @Test func factories() {
        let just = Recorder<Int>(), failed = Recorder<Int>(), empty = Recorder<Int>()
        Signal.just(7).start(just.observer)
        Signal<Int>.error(TestError()).start(failed.observer)
        Signal<Int>.empty.start(empty.observer)
        #expect(just.log == ["next(7)", "completed"])
        #expect(failed.log == ["error(TestError(0))"])
        #expect(empty.log == ["completed"])
        let never = Recorder<Int>()
        Signal<Int>.never.start(never.observer).dispose()
        #expect(never.events.isEmpty)
    }
}
