import MoonCommand
import Testing

@Suite struct FlatMapTests {
    @Test func limitsConcurrencyLikeAQueueWidth() {
        let inners = (0..<4).map { _ in Subject<Int>() }
        let recorder = Recorder<Int>()
        Signal(values: 0..<4).flatMap(maxConcurrent: 2) { inners[$0].signal }.start(recorder.observer)
        #expect(inners.map(\.starts) == [1, 1, 0, 0])
        inners[1].send(next: 1)
        inners[1].sendCompleted()
        #expect(inners.map(\.starts) == [1, 1, 1, 0])
        inners[0].sendCompleted()
        #expect(inners.map(\.starts) == [1, 1, 1, 1])
        inners[2].sendCompleted()
        inners[3].send(next: 3)
        #expect(!recorder.isTerminated)
        inners[3].sendCompleted()
        #expect(recorder.log == ["next(1)", "next(3)", "completed"])
    }

    @Test func innerErrorFailsAndDisposesTheRest() {
        let a = Subject<Int>(), b = Subject<Int>()
        let recorder = Recorder<Int>()
        Signal(values: [a, b]).flatMap { $0.signal }.start(recorder.observer)
        a.send(error: TestError())
        #expect(recorder.log == ["error(TestError(0))"])
        #expect(b.observerCount == 0)
    }

    @Test func manySynchronousInnersWithWidthOne() {
        let recorder = Recorder<Int>()
        Signal(values: 0..<20_000).flatMap(maxConcurrent: 1) { Signal.just($0) }.collect().map { $0.last ?? -1 }.start(recorder.observer)
        #expect(recorder.log == ["next(19999)", "completed"])
    }
}
