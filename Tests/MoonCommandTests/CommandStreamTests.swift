import Foundation
import MoonCommand
import Testing

/// A command whose failure is typed: even inputs succeed with the input
/// doubled, odd ones fail with `TestError(id: input)`.
func parityCommand(on scheduler: TestScheduler, enabledIf: Property<Bool>? = nil,
                   concurrent: Bool = true) -> Command<Int, Int, TestError> {
    Command(executeOn: scheduler, enabledIf: enabledIf, allowsConcurrentExecution: concurrent) { input, result in
        if input % 2 == 0 {
            result.complete(with: input * 2)
        } else {
            result.error(TestError(id: input))
        }
        return nil
    }
}

@Suite struct CommandStreamTests {
    @Test func sharedValuesAndErrorsObserveEveryExecution() {
        let scheduler = TestScheduler()
        let command = parityCommand(on: scheduler)
        let values = Recorder<Int>(), errors = Recorder<TestError>(), completed = Recorder<Void>()
        command.values.start(values.observer)
        command.errors.start(errors.observer)
        command.completed.start(completed.observer)
        for input in [2, 3, 4] { command.signal(input).start { _ in } }
        scheduler.run()
        #expect(values.values == [4, 8])
        #expect(errors.values == [TestError(id: 3)], "the failure keeps its type")
        #expect(completed.values.count == 2)
    }

    @Test func eventsEndEveryExecutionEvenWhenCanceled() {
        let scheduler = TestScheduler()
        let command = Command<Void, Int, TestError>(executeOn: scheduler) { _, result in
            result.next(1)
            return nil // never ends by itself
        }
        let events = Recorder<Event<Int>>(), errors = Recorder<TestError>()
        command.events.start(events.observer)
        command.errors.start(errors.observer)
        let subscription = command.signal().start { _ in }
        scheduler.run()
        subscription.dispose()
        #expect(events.values.map(\.description) == ["next(1)", "error(\(CommandError.canceled))"])
        #expect(errors.values.isEmpty, "a cancellation is not a failure of run")
        #expect(!command.isExecuting.value)
    }

    @Test func sharedStreamsCompleteWhenTheCommandIsReleased() {
        let scheduler = TestScheduler()
        var command: Command<Int, Int, TestError>? = parityCommand(on: scheduler)
        let values = Recorder<Int>()
        command!.values.start(values.observer)
        command = nil
        #expect(values.log == ["completed"])
    }

    @Test func enabledIfGatesExecutionAndReportsRefusals() {
        let scheduler = TestScheduler()
        let allowed = MutableProperty(false)
        let command = parityCommand(on: scheduler, enabledIf: Property(allowed), concurrent: false)
        let enabled = Recorder<Bool>(), refusals = Recorder<Void>(), results = Recorder<Int>()
        command.isEnabled.signal.start(enabled.observer)
        command.disabledErrors.start(refusals.observer)

        command.signal(2).start(results.observer)
        #expect(results.events.last?.error as? CommandError == .disabled)
        #expect(refusals.values.count == 1)

        allowed.value = true
        let running = command.signal(4).start { _ in }
        #expect(!command.isEnabled.value, "executing, and concurrent execution is not allowed")
        scheduler.run()
        #expect(command.isEnabled.value)
        allowed.value = false
        #expect(!command.isEnabled.value)
        #expect(enabled.values == [false, true, false, true, false])
        _ = running
    }

    @Test func enabledIfCombinesWithConcurrentExecution() {
        let scheduler = TestScheduler()
        let allowed = MutableProperty(true)
        let command = parityCommand(on: scheduler, enabledIf: Property(allowed), concurrent: true)
        let values = Recorder<Int>()
        command.values.start(values.observer)
        command.signal(2).start { _ in }
        command.signal(4).start { _ in }
        #expect(command.isEnabled.value, "concurrent executions keep it enabled")
        allowed.value = false
        let refused = Recorder<Int>()
        command.signal(6).start(refused.observer)
        #expect(refused.events.last?.error as? CommandError == .disabled)
        scheduler.run()
        #expect(values.values == [4, 8], "executions admitted before enabledIf turned false still run")
    }
}
