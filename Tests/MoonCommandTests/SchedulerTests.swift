import Dispatch
import Foundation
import MoonCommand
import Testing

@Suite struct SchedulerTests {
    @Test func testSchedulerRunsActionsInTimeOrderOnlyWhenAdvanced() {
        let scheduler = TestScheduler()
        nonisolated(unsafe) var log: [String] = []
        scheduler.schedule(after: .seconds(2)) { log.append("b@2") }
        scheduler.schedule(after: .seconds(1)) { log.append("a@1") }
        scheduler.schedule { log.append("now") }
        scheduler.schedule(after: .seconds(2)) { log.append("c@2") }
        #expect(log.isEmpty)
        scheduler.advance()
        #expect(log == ["now"])
        scheduler.advance(by: .seconds(1.5))
        #expect(log == ["now", "a@1"])
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 1.5))
        scheduler.run()
        #expect(log == ["now", "a@1", "b@2", "c@2"])
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 2))
    }

    @Test func testSchedulerCancelsAndRunsNestedSchedules() {
        let scheduler = TestScheduler()
        nonisolated(unsafe) var log: [String] = []
        scheduler.schedule(after: .seconds(1)) { log.append("canceled") }?.dispose()
        scheduler.schedule(after: .seconds(1)) {
            log.append("outer")
            scheduler.schedule(after: .seconds(1)) { log.append("inner@\(scheduler.now.timeIntervalSinceReferenceDate)") }
        }
        scheduler.run()
        #expect(log == ["outer", "inner@2.0"])
    }

    @Test func queueSchedulerRunsOnItsQueue() {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.queue")
        queue.setSpecific(key: key, value: "test.queue")
        let scheduler = QueueScheduler(queue: queue)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var seen: String?
        nonisolated(unsafe) var canceledRan = false
        // Suspended, so the cancel surely comes before the action is due.
        queue.suspend()
        scheduler.schedule { canceledRan = true }?.dispose()
        queue.resume()
        scheduler.schedule(after: .seconds(0.002)) {
            seen = DispatchQueue.getSpecific(key: key)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen == "test.queue")
        #expect(!canceledRan)
    }

    @Test func immediateSchedulerRunsAtOnce() {
        nonisolated(unsafe) var ran = false
        ImmediateScheduler().schedule { ran = true }
        #expect(ran)
    }
}
