import Dispatch
import Foundation
import MoonCommand
import Synchronization
import Testing

/// A command that sends its input on the execute queue and completes.
final class EchoCommand: Command<Int, Int, any Error>, @unchecked Sendable {
    override func run(_ input: Int, result: CommandResult<Int>) -> Cancelable? {
        result.next(input)
        result.complete()
        return nil
    }
}

/// A command whose run never ends by itself; records cancellation.
final class HangingCommand: Command<Void, Int, any Error>, @unchecked Sendable {
    let canceled = DispatchSemaphore(value: 0)
    let running = DispatchSemaphore(value: 0)

    override func run(_ input: Void, result: CommandResult<Int>) -> Cancelable? {
        result.next(1)
        running.signal()
        let canceled = self.canceled
        return ActionDisposable { canceled.signal() }
    }
}

final class CallbackObject: CommandCallback {
    typealias Output = Int
    let lock = NSLock()
    nonisolated(unsafe) var log: [String] = []  // under `lock`
    let done = DispatchSemaphore(value: 0)

    func onNext(_ command: AnyCommand, value: Int) { append("next \(value) from \(command.name)") }
    func onComplete(_ command: AnyCommand) { append("complete"); done.signal() }
    func onError(_ command: AnyCommand, error: Error) { append("error \(error)"); done.signal() }

    private func append(_ line: String) {
        lock.lock(); log.append(line); lock.unlock()
    }
}

func labelledQueue(_ label: String, key: DispatchSpecificKey<String>) -> DispatchQueue {
    let queue = DispatchQueue(label: label)
    queue.setSpecific(key: key, value: label)
    return queue
}

@Suite struct CommandTests {
    @Test func runExecutesOnTheExecuteQueueAndCallbacksOnTheCallersQueue() {
        let key = DispatchSpecificKey<String>()
        let executeQueue = labelledQueue("execute", key: key)
        let callbackQueue = labelledQueue("callback", key: key)
        let lock = NSLock()
        nonisolated(unsafe) var runQueue: String?
        nonisolated(unsafe) var log: [String] = []
        let done = DispatchSemaphore(value: 0)
        let command = Command<Int, Int, any Error>(name: "double", executeQueue: executeQueue) { input, result in
            lock.lock(); runQueue = DispatchQueue.getSpecific(key: key); lock.unlock()
            result.next(input * 2)
            result.complete()
            return nil
        }
        command.execute(21, callbackOn: callbackQueue) { command, value, error, isCompleted in
            lock.lock()
            log.append("\(command.name) \(value.map(String.init) ?? "-") \(error == nil) \(isCompleted) on \(DispatchQueue.getSpecific(key: key) ?? "?")")
            lock.unlock()
            if isCompleted { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        lock.lock(); defer { lock.unlock() }
        #expect(runQueue == "execute")
        #expect(log == ["double 42 true false on callback", "double - true true on callback"])
    }

    @Test func callbackObjectReceivesEventsAndIsHeldWeakly() {
        let command = EchoCommand(name: "echo")
        let callback = CallbackObject()
        command.execute(5, callbackOn: DispatchQueue(label: "cb"), callback: callback)
        #expect(callback.done.wait(timeout: .now() + 10) == .success)
        #expect(callback.log == ["next 5 from echo", "complete"])

        weak var released: CallbackObject?
        let scheduler = TestScheduler()
        do {
            let temporary = CallbackObject()
            released = temporary
            let recorder = Recorder<Int>()
            command.signal(1).start(recorder.observer)
            recorder.waitForTerminal()
            command.execute(6, callbackOn: scheduler, callback: temporary)
        }
        #expect(released == nil, "the command does not keep its callback object alive")
        scheduler.run() // delivering to a released callback object is a no-op
    }

    @Test func executingWhileRunningFailsWithDisabled() {
        let command = HangingCommand(name: "hang")
        let scheduler = TestScheduler()
        nonisolated(unsafe) var events: [String] = []
        #expect(command.isEnabled.value)
        let first = command.execute(callbackOn: DispatchQueue(label: "unused")) { _, _, _, _ in }
        command.running.wait()
        #expect(command.isExecuting.value)
        #expect(!command.isEnabled.value)
        command.execute((), callbackOn: scheduler) { _, value, error, done in
            events.append("\(value.map(String.init) ?? "-") \(error.map { "\($0)" } ?? "-") \(done)")
        }
        scheduler.run()
        #expect(events == ["- \(CommandError.disabled) true"])
        #expect(command.isExecuting.value, "the running execution is not disturbed")
        first.cancel()
        #expect(command.canceled.wait(timeout: .now() + 10) == .success)
    }

    @Test func concurrentExecutionWhenAllowed() {
        let command = Command<Int, Int, any Error>(executeQueue: DispatchQueue(label: "pool", attributes: .concurrent), allowsConcurrentExecution: true) { input, result in
            result.complete(with: input)
            return nil
        }
        let recorder = Recorder<Int>()
        Signal.merge((0..<20).map { command.signal($0) }).collect().map { $0.count }.start(recorder.observer)
        #expect(recorder.waitForTerminal())
        #expect(recorder.values == [20])
    }

    /// A command can execute on any scheduler instead of a queue (moon runs
    /// its node commands on its event loop): `run` waits for that scheduler.
    @Test func runExecutesOnAGivenScheduler() {
        let scheduler = TestScheduler()
        let command = Command<Int, Int, any Error>(name: "on-scheduler", executeOn: scheduler) { input, result in
            result.complete(with: input * 2)
            return nil
        }
        #expect(command.executeQueue == nil)
        nonisolated(unsafe) var received: [Int] = []
        nonisolated(unsafe) var completed = false
        command.execute(21, callbackOn: scheduler) { _, value, _, isCompleted in
            if let value { received.append(value) }
            if isCompleted { completed = true }
        }
        #expect(received.isEmpty && !completed && command.isExecuting.value)
        scheduler.run()
        #expect(received == [42])
        #expect(completed)
        #expect(!command.isExecuting.value)
    }

    @Test func isExecutingIsObservable() {
        let command = HangingCommand()
        let recorder = Recorder<Bool>()
        command.isExecuting.signal.start(recorder.observer)
        let subscription = command.signal().start { _ in }
        command.running.wait()
        subscription.dispose()
        #expect(command.canceled.wait(timeout: .now() + 10) == .success)
        #expect(recorder.values == [false, true, false])
        #expect(!command.isExecuting.value)
    }

    @Test func manualCancelStopsTheWorkAndEndsWithCanceled() {
        let command = HangingCommand()
        let scheduler = TestScheduler()
        nonisolated(unsafe) var log: [String] = []
        let cancelable = command.execute((), callbackOn: scheduler) { _, value, error, done in
            log.append(value.map { "next \($0)" } ?? "\(error.map { "\($0)" } ?? "completed")")
        }
        command.running.wait()
        cancelable.cancel()
        #expect(command.canceled.wait(timeout: .now() + 10) == .success)
        scheduler.run()
        #expect(log == ["next 1", "\(CommandError.canceled)"])
    }

    @Test func releasingTheCommandCancelsInFlightWork() {
        var command: HangingCommand? = HangingCommand()
        let canceled = command!.canceled
        let recorder = Recorder<Int>()
        command!.signal().start(recorder.observer)
        command!.running.wait()
        // `run` has started; let the execute queue's block (which holds the
        // command while it calls `run`) finish before letting go.
        command!.executeQueue?.sync {}
        weak let weakCommand = command
        command = nil
        #expect(weakCommand == nil, "in-flight work does not keep the command alive")
        #expect(canceled.wait(timeout: .now() + 10) == .success)
        #expect(recorder.waitForTerminal())
        #expect(recorder.events.last?.error as? CommandError == .released)
    }

    @Test func releasingTheCommandEndsOnlyTheExecutionsStillInFlight() {
        let scheduler = TestScheduler()
        let sinks = Mutex<[Int: CommandSink<Int, any Error>]>([:])
        var command: Command<Int, Int, any Error>? = Command(executeOn: scheduler, allowsConcurrentExecution: true) { input, result in
            sinks.withLock { $0[input] = result }
            return nil
        }
        let recorders = (0..<4).map { _ in Recorder<Int>() }
        for (input, recorder) in recorders.enumerated() { command!.signal(input).start(recorder.observer) }
        scheduler.run()
        #expect(command!.isExecuting.value)
        // The first, a middle and the last execution end on their own; the others are still in flight.
        for input in [0, 2, 3] { sinks.withLock { $0[input] }!.complete(with: input) }
        #expect(command!.isExecuting.value)
        command = nil
        #expect(recorders.map(\.log) == [["next(0)", "completed"], ["error(\(CommandError.released))"],
                                         ["next(2)", "completed"], ["next(3)", "completed"]])
    }

    @Test func executeBlockAndComposition() {
        let one = Command<Void, Int, any Error> { _, result in result.complete(with: 1); return nil }
        let two = Command<Void, Int, any Error> { _, result in result.complete(with: 2); return nil }
        let recorder = Recorder<Int>()
        Signal.combineLatest([one.signal(), two.signal()], reduce: { $0.reduce(0, +) }).start(recorder.observer)
        #expect(recorder.waitForTerminal())
        #expect(recorder.log == ["next(3)", "completed"])
        let missing = Recorder<Int>()
        let bare = Command<Void, Int, any Error>()
        bare.signal().start(missing.observer)
        #expect(missing.waitForTerminal())
        #expect(missing.events.last?.error as? CommandError == .notImplemented)
        withExtendedLifetime(bare) {}
        // A signal whose command is gone fails instead of hanging.
        let orphan = Recorder<Int>()
        Command<Void, Int, any Error>().signal().start(orphan.observer)
        #expect(orphan.waitForTerminal())
        #expect(orphan.events.last?.error as? CommandError == .released)
    }
}
