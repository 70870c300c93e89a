import MoonCommand
import Testing

@Suite struct ReplayTests {
    @Test func startsTheUpstreamOnceAndReplaysToLateSubscribers() {
        let subject = Subject<Int>()
        let shared = subject.signal.replay()
        #expect(subject.starts == 0, "lazy: nothing runs before the first subscriber")
        let early = Recorder<Int>(), late = Recorder<Int>(), after = Recorder<Int>()
        shared.start(early.observer)
        subject.send(next: 1)
        shared.start(late.observer)
        subject.send(next: 2)
        subject.sendCompleted()
        shared.start(after.observer)
        #expect(subject.starts == 1)
        for recorder in [early, late, after] {
            #expect(recorder.log == ["next(1)", "next(2)", "completed"])
        }
    }

    @Test func capacityKeepsTheLastValues() {
        let recorder = Recorder<Int>()
        let shared = Signal(values: 1...5).replay(upTo: 2)
        shared.start { _ in }
        shared.start(recorder.observer)
        #expect(recorder.log == ["next(4)", "next(5)", "completed"])
    }

    @Test func cancelsTheUpstreamWhenEverySubscriberLeaves() {
        let subject = Subject<Int>()
        let shared = subject.signal.replay()
        let a = shared.start { _ in }, b = shared.start { _ in }
        a.dispose()
        #expect(subject.disposals == 0)
        b.dispose()
        #expect(subject.disposals == 1)
        let late = Recorder<Int>()
        shared.start(late.observer)
        #expect(late.events.last?.error as? SignalError == .canceled)
        #expect(subject.starts == 1)
    }
}
