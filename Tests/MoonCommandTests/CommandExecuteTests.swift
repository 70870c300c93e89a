import Dispatch
import Foundation
import MoonCommand
import Testing

/// The callback path of `execute(_:callbackOn:_:)`: grammar, ordering,
/// scheduler hops, cancellation and release.
@Suite struct CommandExecuteTests {
    /// Records callbacks as strings; for use on one scheduler or queue.
    final class Log {
        let lock = NSLock()
        var lines: [String] = []

        func append(_ value: Int?, _ error: Error?, _ isCompleted: Bool) {
            let line: String
            if let error { line = "error \(error)" } else if isCompleted { line = "completed" } else { line = "next \(value!)" }
            lock.lock(); lines.append(line); lock.unlock()
        }

        var all: [String] {
            lock.lock(); defer { lock.unlock() }
            return lines
        }
    }

    @Test func callbacksArriveInOrderOnTheGivenSchedulerOnly() {
        let scheduler = TestScheduler()
        let command = Command<Int, Int, any Error>(executeOn: scheduler) { input, result in
            for value in 0..<input { result.next(value) }
            result.complete()
            result.next(99) // after the terminal event: ignored
            result.error(TestError())
            return nil
        }
        let log = Log()
        command.execute(3, callbackOn: scheduler) { _, value, error, done in log.append(value, error, done) }
        #expect(log.all.isEmpty, "nothing runs before the scheduler does")
        scheduler.run()
        #expect(log.all == ["next 0", "next 1", "next 2", "completed"])
        #expect(!command.isExecuting.value)
    }

    @Test func manyEventsAreDeliveredInOrderAcrossDrains() {
        let scheduler = TestScheduler()
        let command = Command<Int, Int, any Error>(executeOn: scheduler) { input, result in
            for value in 0..<input { result.next(value) }
            result.complete()
            return nil
        }
        nonisolated(unsafe) var values: [Int] = []
        nonisolated(unsafe) var terminals = 0
        command.execute(1000, callbackOn: scheduler) { _, value, _, done in
            if let value { values.append(value) }
            if done { terminals += 1 }
        }
        scheduler.run()
        #expect(values == Array(0..<1000))
        #expect(terminals == 1)
    }

    @Test func errorEndsTheExecution() {
        let scheduler = TestScheduler()
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, result in
            result.next(1)
            result.error(TestError(id: 7))
            result.complete()
            return nil
        }
        let log = Log()
        command.execute((), callbackOn: scheduler) { _, value, error, done in log.append(value, error, done) }
        scheduler.run()
        #expect(log.all == ["next 1", "error TestError(7)"])
    }

    @Test func eventsSentFromOtherThreadsAreSerialAndEndWithOneTerminal() {
        let command = Command<Int, Int, any Error>(executeQueue: DispatchQueue(label: "run")) { input, result in
            // Two producers at once; one of them completes at the end.
            let group = DispatchGroup()
            for producer in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    for value in 0..<input { result.next(producer * input + value) }
                }
            }
            group.notify(queue: .global()) { result.complete() }
            return nil
        }
        let callbackQueue = DispatchQueue(label: "callbacks")
        let done = DispatchSemaphore(value: 0)
        let lock = NSLock()
        nonisolated(unsafe) var inCallback = false
        nonisolated(unsafe) var overlapped = false
        nonisolated(unsafe) var values: [Int] = []
        nonisolated(unsafe) var terminals = 0
        command.execute(500, callbackOn: callbackQueue) { _, value, _, isCompleted in
            lock.lock()
            if inCallback { overlapped = true }
            inCallback = true
            if let value { values.append(value) }
            if isCompleted { terminals += 1 }
            inCallback = false
            lock.unlock()
            if isCompleted { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        callbackQueue.sync {}
        lock.lock(); defer { lock.unlock() }
        #expect(!overlapped)
        #expect(terminals == 1)
        #expect(values.count == 1000)
        // Each producer's values arrive in the order it sent them.
        #expect(values.filter { $0 < 500 } == Array(0..<500))
        #expect(values.filter { $0 >= 500 } == Array(500..<1000))
    }

    @Test func cancelBeforeRunStartsRunsNothingAndEndsWithCanceled() {
        let scheduler = TestScheduler()
        nonisolated(unsafe) var runs = 0
        nonisolated(unsafe) var ended = false
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, result in
            runs += 1
            result.onEnd { ended = true }
            return nil
        }
        let log = Log()
        let cancelable = command.execute((), callbackOn: scheduler) { _, value, error, done in log.append(value, error, done) }
        cancelable.cancel()
        #expect(cancelable.isCanceled)
        #expect(!command.isExecuting.value, "a canceled execution no longer counts")
        scheduler.run()
        #expect(runs == 0)
        #expect(!ended)
        #expect(log.all == ["error \(CommandError.canceled)"])
    }

    @Test func cancelStopsTheWorkAndRunsEndActions() {
        let scheduler = TestScheduler()
        nonisolated(unsafe) var workCanceled = false
        nonisolated(unsafe) var endActionRan = false
        nonisolated(unsafe) var captured: CommandResult<Int>?
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, result in
            captured = result
            result.next(1)
            result.onEnd { endActionRan = true }
            return ActionDisposable { workCanceled = true }
        }
        let log = Log()
        let cancelable = command.execute((), callbackOn: scheduler) { _, value, error, done in log.append(value, error, done) }
        scheduler.advance()
        #expect(captured?.isActive == true)
        cancelable.cancel()
        #expect(workCanceled && endActionRan)
        #expect(captured?.isActive == false)
        captured?.next(2) // late sends of the work are ignored
        captured?.complete()
        scheduler.run()
        #expect(log.all == ["next 1", "error \(CommandError.canceled)"])
    }

    @Test func cancelAfterTheTerminalEventChangesNothing() {
        let scheduler = TestScheduler()
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, result in
            result.complete(with: 1)
            return nil
        }
        let log = Log()
        let cancelable = command.execute((), callbackOn: scheduler) { _, value, error, done in log.append(value, error, done) }
        scheduler.advance() // run has completed; callbacks still pending
        cancelable.cancel()
        scheduler.run()
        #expect(log.all == ["next 1", "completed"])
    }

    @Test func theCommandIsEnabledAgainWhenTheTerminalCallbackArrives() {
        let scheduler = TestScheduler()
        let command = Command<Int, Int, any Error>(executeOn: scheduler) { input, result in
            result.complete(with: input)
            return nil
        }
        nonisolated(unsafe) var log: [String] = []
        @Sendable func run(_ input: Int) {
            command.execute(input, callbackOn: scheduler) { command, value, error, done in
                if let value { log.append("next \(value)") }
                if let error { log.append("error \(error)") }
                if done, error == nil, input < 3 { run(input + 1) }
            }
        }
        run(1)
        scheduler.run()
        #expect(log == ["next 1", "next 2", "next 3"])
    }

    @Test func releasingTheCommandStopsCallbacksAndCancelsTheWork() {
        let runs = TestScheduler()
        let callbacks = TestScheduler()
        nonisolated(unsafe) var workCanceled = false
        var command: Command<Void, Int, any Error>? = Command(executeOn: runs) { _, result in
            result.next(1)
            return ActionDisposable { workCanceled = true }
        }
        weak let weakCommand = command
        let log = Log()
        let cancelable = command!.execute((), callbackOn: callbacks) { _, value, error, done in log.append(value, error, done) }
        runs.run() // `run` sent a value, which waits on the callback scheduler
        command = nil
        #expect(weakCommand == nil, "in-flight work does not keep the command alive")
        #expect(workCanceled)
        #expect(cancelable.isCanceled)
        callbacks.run()
        #expect(log.all.isEmpty, "no command, no callbacks")
    }

    @Test func aCallbackMayCancelItsOwnExecution() {
        let scheduler = TestScheduler()
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, result in
            result.next(1)
            result.next(2)
            return nil
        }
        let log = Log()
        nonisolated(unsafe) var cancelable: Cancelable?
        cancelable = command.execute((), callbackOn: scheduler) { _, value, error, done in
            log.append(value, error, done)
            if value == 1 { cancelable?.cancel() }
        }
        scheduler.run()
        #expect(log.all == ["next 1", "next 2", "error \(CommandError.canceled)"])
    }

    @Test func isExecutingObservedAfterAnExecutionStarted() {
        let scheduler = TestScheduler()
        let command = Command<Void, Int, any Error>(executeOn: scheduler) { _, _ in nil } // never ends by itself
        let cancelable = command.execute((), callbackOn: scheduler) { _, _, _, _ in }
        let recorder = Recorder<Bool>()
        command.isExecuting.signal.start(recorder.observer)
        #expect(!command.isEnabled.value)
        cancelable.cancel()
        #expect(recorder.values == [true, false])
        #expect(command.isEnabled.value)
    }
}
