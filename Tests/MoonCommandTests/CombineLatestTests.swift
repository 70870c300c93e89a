import MoonCommand
import Testing

@Suite struct CombineLatestTests {
    @Test func sendsOnceAllHaveValuesThenOnEveryChange() {
        let a = Subject<Int>(), b = Subject<Int>()
        let recorder = Recorder<[Int]>()
        Signal.combineLatest([a.signal, b.signal]).start(recorder.observer)
        a.send(next: 1)
        #expect(recorder.events.isEmpty)
        b.send(next: 10)
        a.send(next: 2)
        a.sendCompleted()
        #expect(!recorder.isTerminated)
        b.send(next: 20)
        b.sendCompleted()
        #expect(recorder.log == ["next([1, 10])", "next([2, 10])", "next([2, 20])", "completed"])
    }

    @Test func reduceAndFirstErrorWins() {
        let a = Subject<Int>(), b = Subject<Int>()
        let recorder = Recorder<Int>()
        Signal.combineLatest([a.signal, b.signal], reduce: { $0.reduce(0, +) }).start(recorder.observer)
        a.send(next: 1)
        b.send(next: 2)
        b.send(error: TestError(id: 7))
        a.send(next: 5)
        #expect(recorder.log == ["next(3)", "error(TestError(7))"])
        #expect(a.observerCount == 0, "the others are disposed on error")
    }

    @Test func emptyAndPairwise() {
        let empty = Recorder<[Int]>()
        Signal<Int>.combineLatest([]).start(empty.observer)
        #expect(empty.log == ["next([])", "completed"])
        let pairs = Recorder<String>()
        Signal.just(1).combineLatest(with: Signal.just("x")).map { "\($0.0)\($0.1)" }.start(pairs.observer)
        #expect(pairs.log == ["next(1x)", "completed"])
    }

    @Test func tenThousandSignals() {
        let signals = (0..<10_000).map { Signal.just($0) }
        let recorder = Recorder<Int>()
        Signal.combineLatest(signals, reduce: { $0.count }).start(recorder.observer)
        #expect(recorder.log == ["next(10000)", "completed"])
    }
}
