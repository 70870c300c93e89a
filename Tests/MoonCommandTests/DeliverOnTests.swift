import Dispatch
import Foundation
import MoonCommand
import Testing

@Suite struct DeliverOnTests {
    @Test func deliversInOrderOnTheScheduler() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal(values: 0..<1_000).deliverOn(scheduler).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        scheduler.run()
        #expect(recorder.values == Array(0..<1_000))
        #expect(recorder.isTerminated)
    }

    @Test func deliversOnTheQueueEvenWhenItIsConcurrent() {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "delivery", attributes: .concurrent)
        queue.setSpecific(key: key, value: 42)
        let lock = NSLock()
        nonisolated(unsafe) var onQueue = true
        let recorder = Recorder<Int>()
        let source = Signal<Int> { observer, _ in
            DispatchQueue(label: "producer").async {
                for i in 0..<5_000 { observer.send(next: i) }
                observer.sendCompleted()
            }
        }
        source.deliverOn(QueueScheduler(queue: queue)).start { event in
            if DispatchQueue.getSpecific(key: key) != 42 { lock.lock(); onQueue = false; lock.unlock() }
            recorder.observer.send(event)
        }
        #expect(recorder.waitForTerminal())
        #expect(recorder.values == Array(0..<5_000))
        lock.lock(); defer { lock.unlock() }
        #expect(onQueue)
    }

    @Test func subscribeOnStartsTheWorkOnTheScheduler() {
        let scheduler = TestScheduler()
        nonisolated(unsafe) var started = false
        let recorder = Recorder<Int>()
        Signal<Int> { observer, _ in started = true; observer.send(next: 1); observer.sendCompleted() }
            .subscribeOn(scheduler).start(recorder.observer)
        #expect(!started)
        scheduler.advance()
        #expect(recorder.log == ["next(1)", "completed"])

        nonisolated(unsafe) var startedLater = false
        Signal<Int> { _, _ in startedLater = true }.subscribeOn(scheduler).start { _ in }.dispose()
        scheduler.run()
        #expect(!startedLater, "disposed before its start ran")
    }
}
