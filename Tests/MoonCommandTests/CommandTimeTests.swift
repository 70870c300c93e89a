import Foundation
import MoonCommand
import Synchronization
import Testing

/// A command on virtual time: every attempt records when it started, fails
/// for the first `failures` attempts, and otherwise runs for `duration`.
final class Attempts: Sendable {
    /// What the attempts record, apart from `self`, which holds the command.
    private final class Record: Sendable {
        let starts = Mutex<[TimeInterval]>([])
        let canceled = Mutex(0)
    }
    private let record = Record()
    let command: Command<Void, Int, TestError>

    init(on scheduler: TestScheduler, failures: Int, duration: Duration = .zero) {
        let record = self.record
        command = Command(executeOn: scheduler) { _, result in
            let attempt = record.starts.withLock { starts -> Int in
                starts.append(scheduler.now.timeIntervalSinceReferenceDate)
                return starts.count
            }
            if attempt <= failures {
                result.error(TestError(id: attempt))
                return nil
            }
            let timer = scheduler.schedule(after: duration) { result.complete(with: attempt) }
            return ActionDisposable {
                record.canceled.withLock { $0 += 1 }
                timer?.dispose()
            }
        }
    }

    /// The virtual start time of every attempt, in seconds.
    var startTimes: [TimeInterval] { record.starts.withLock { $0 } }
    /// How many attempts had their work canceled.
    var cancellations: Int { record.canceled.withLock { $0 } }
}

@Suite struct CommandTimeTests {
    @Test func retryWaitsAsThePolicySaysWithBackoffAndCap() {
        let scheduler = TestScheduler()
        let attempts = Attempts(on: scheduler, failures: 4)
        let waits = Mutex<[Duration]>([])
        let recorder = Recorder<Int>()
        attempts.command.signal()
            .retry(RetryPolicy(times: 4, delay: .seconds(1), backoff: 2, maxDelay: .seconds(3)), on: scheduler) { _, wait, _ in
                waits.withLock { $0.append(wait) }
            }
            .start(recorder.observer)
        scheduler.run()
        #expect(waits.withLock { $0 } == [.seconds(1), .seconds(2), .seconds(3), .seconds(3)])
        #expect(attempts.startTimes == [0, 1, 3, 6, 9])
        #expect(recorder.log == ["next(5)", "completed"])
    }

    @Test func aTimeoutDuringARetrysDelayEndsTheRetries() {
        let scheduler = TestScheduler()
        let attempts = Attempts(on: scheduler, failures: .max)
        let recorder = Recorder<Int>()
        attempts.command.signal()
            .retry(RetryPolicy(times: 5, delay: .seconds(10)), on: scheduler)
            .timeout(after: .seconds(5), on: scheduler)
            .start(recorder.observer)
        scheduler.advance(by: .seconds(5))
        #expect(recorder.events.last?.error as? SignalError == .timedOut(after: .seconds(5)))
        scheduler.advance(by: .seconds(60))
        #expect(attempts.startTimes == [0], "the waiting retry is canceled with the subscription")
        #expect(scheduler.pendingCount == 0)
    }

    @Test func aTimeoutCancelsTheRunningAttemptsWork() {
        let scheduler = TestScheduler()
        let attempts = Attempts(on: scheduler, failures: 0, duration: .seconds(100))
        let recorder = Recorder<Int>()
        attempts.command.signal().timeout(after: .seconds(2), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .seconds(2))
        #expect(recorder.events.last?.error as? SignalError == .timedOut(after: .seconds(2)))
        #expect(attempts.cancellations == 1)
        #expect(attempts.command.isEnabled.value, "the canceled execution no longer counts")
    }

    @Test func disposingTheChainCancelsTheAttemptInFlight() {
        let scheduler = TestScheduler()
        let attempts = Attempts(on: scheduler, failures: 1, duration: .seconds(100))
        let events = Recorder<Event<Int>>()
        attempts.command.events.start(events.observer)
        let subscription = attempts.command.signal()
            .retry(RetryPolicy(times: 3, delay: .seconds(1)), on: scheduler)
            .timeout(after: .seconds(60), on: scheduler)
            .start { _ in }
        scheduler.advance(by: .seconds(10))
        #expect(attempts.startTimes == [0, 1])
        #expect(attempts.command.isExecuting.value)
        subscription.dispose()
        #expect(attempts.cancellations == 1)
        #expect(!attempts.command.isExecuting.value)
        #expect(events.values.map(\.description) == ["error(TestError(1))", "error(\(CommandError.canceled))"])
        scheduler.run()
        #expect(attempts.startTimes == [0, 1], "nothing runs after disposal")
    }
}
