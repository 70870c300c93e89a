import MoonCommand
import Testing

@Suite struct MiscOperatorTests {
    @Test func materializeTurnsErrorsIntoValues() {
        let recorder = Recorder<String>()
        Signal(values: [1]).concat(.error(TestError())).materialize().map { $0.description }.start(recorder.observer)
        #expect(recorder.log == ["next(next(1))", "next(error(TestError(0)))", "completed"])
        let back = Recorder<Int>()
        Signal.just(3).materialize().dematerialize().start(back.observer)
        #expect(back.log == ["next(3)", "completed"])
    }

    @Test func takeUntilCompletesOnTheTrigger() {
        let source = Subject<Int>(), trigger = Subject<Void>()
        let recorder = Recorder<Int>()
        source.signal.takeUntil(trigger.signal).start(recorder.observer)
        source.send(next: 1)
        trigger.send(next: ())
        source.send(next: 2)
        #expect(recorder.log == ["next(1)", "completed"])
        #expect(source.observerCount == 0 && trigger.observerCount == 0)
    }

    @Test func sideEffectHooksRunInOrder() {
        nonisolated(unsafe) var log: [String] = []
        let subject = Subject<Int>()
        let subscription = subject.signal.on(
            starting: { log.append("starting") },
            started: { log.append("started") },
            next: { log.append("next \($0)") },
            completed: { log.append("completed") },
            terminated: { log.append("terminated") },
            disposed: { log.append("disposed") }
        ).start { _ in log.append("observer") }
        subject.send(next: 1)
        subject.sendCompleted()
        subscription.dispose()
        #expect(log == ["starting", "started", "next 1", "observer", "completed", "terminated", "observer", "disposed"])
    }

    @Test func takeFirstSkipRepeatsCollect() {
        let recorder = Recorder<[Int]>()
        Signal(values: [1, 1, 2, 2, 3, 4]).skipRepeats().take(first: 3).collect().start(recorder.observer)
        #expect(recorder.log == ["next([1, 2, 3])", "completed"])
    }
}

@Suite struct PropertyTests {
    @Test func sendsCurrentValueThenChangesAndCompletesOnRelease() {
        var property: MutableProperty<Int>? = MutableProperty(1)
        let recorder = Recorder<Int>()
        property!.signal.start(recorder.observer)
        property!.value = 2
        property!.modify { $0 += 1 }
        #expect(property!.value == 3)
        property = nil
        #expect(recorder.log == ["next(1)", "next(2)", "next(3)", "completed"])
    }
}
