import MoonCommand
import Testing

@Suite struct MergeConcatTests {
    @Test func mergeInterleavesAndCompletesWhenAllDo() {
        let a = Subject<Int>(), b = Subject<Int>()
        let recorder = Recorder<Int>()
        a.signal.merge(with: b.signal).start(recorder.observer)
        a.send(next: 1); b.send(next: 2); a.sendCompleted(); b.send(next: 3)
        #expect(!recorder.isTerminated)
        b.sendCompleted()
        #expect(recorder.log == ["next(1)", "next(2)", "next(3)", "completed"])
    }

    @Test func concatStartsTheNextOnlyAfterCompletion() {
        let a = Subject<Int>(), b = Subject<Int>()
        let recorder = Recorder<Int>()
        Signal.concat([a.signal, b.signal]).start(recorder.observer)
        #expect(a.starts == 1 && b.starts == 0)
        a.send(next: 1)
        a.sendCompleted()
        #expect(b.starts == 1)
        b.send(next: 2)
        b.sendCompleted()
        #expect(recorder.log == ["next(1)", "next(2)", "completed"])
    }

    @Test func thenIgnoresValuesAndStopsOnError() {
        let ok = Recorder<String>()
        Signal(values: [1, 2]).then(Signal.just("done")).start(ok.observer)
        #expect(ok.log == ["next(done)", "completed"])
        nonisolated(unsafe) var started = false
        let failed = Recorder<String>()
        Signal<Int>.error(TestError()).then(Signal<String> { o, _ in started = true; o.sendCompleted() }).start(failed.observer)
        #expect(failed.log == ["error(TestError(0))"])
        #expect(!started)
    }

    @Test func concatOfManySynchronousSignalsDoesNotRecurse() {
        let recorder = Recorder<Int>()
        Signal.concat((0..<50_000).map { Signal.just($0) }).collect().map { $0.count }.start(recorder.observer)
        #expect(recorder.log == ["next(50000)", "completed"])
    }
}
