import MoonCommand
import Testing

@Suite struct MapFilterTests {
    @Test func mapTransformsValuesAndKeepsTerminal() {
        let recorder = Recorder<String>()
        Signal(values: [1, 2]).map { "v\($0)" }.start(recorder.observer)
        #expect(recorder.log == ["next(v1)", "next(v2)", "completed"])
    }

    @Test func filterDropsValuesAndForwardsErrors() {
        let recorder = Recorder<Int>()
        Signal(values: 1...6).filter { $0 % 2 == 0 }.start(recorder.observer)
        #expect(recorder.log == ["next(2)", "next(4)", "next(6)", "completed"])
        let failed = Recorder<Int>()
        Signal<Int>.error(TestError()).filter { _ in false }.start(failed.observer)
        #expect(failed.log == ["error(TestError(0))"])
    }

    @Test func disposingAMappedChainDisposesTheSource() {
        let subject = Subject<Int>()
        let recorder = Recorder<Int>()
        let subscription = subject.signal.map { $0 * 10 }.filter { $0 > 10 }.start(recorder.observer)
        subject.send(next: 1)
        subject.send(next: 2)
        subscription.dispose()
        subject.send(next: 3)
        #expect(recorder.values == [20])
        #expect(subject.observerCount == 0)
    }
}
