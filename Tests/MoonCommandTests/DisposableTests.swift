import MoonCommand
import Testing

@Suite struct DisposableTests {
    @Test func actionDisposableRunsOnce() {
        nonisolated(unsafe) var runs = 0
        let disposable = ActionDisposable { runs += 1 }
        #expect(!disposable.isDisposed)
        disposable.dispose()
        disposable.dispose()
        #expect(runs == 1)
        #expect(disposable.isDisposed)
    }

    @Test func compositeDisposesChildrenInOrderAndLateAdditionsAtOnce() {
        nonisolated(unsafe) var order: [Int] = []
        let composite = CompositeDisposable()
        composite.add { order.append(1) }
        let removed = composite.add { order.append(99) }
        composite.add { order.append(2) }
        composite.remove(removed!)
        composite.dispose()
        #expect(order == [1, 2])
        let late = ActionDisposable { order.append(3) }
        #expect(composite.add(late) == nil)
        #expect(late.isDisposed)
        #expect(order == [1, 2, 3])
    }

    @Test func compositeRemovesAnyChildByItsTokenOnce() {
        nonisolated(unsafe) var order: [Int] = []
        let composite = CompositeDisposable()
        let tokens = (0..<6).map { i in composite.add { order.append(i) }! }
        // First, last, a middle one, one twice: each removal takes exactly its own child.
        for index in [0, 5, 2, 2] { composite.remove(tokens[index]) }
        composite.dispose()
        #expect(order == [1, 3, 4])
        // Removing after disposal does nothing.
        composite.remove(tokens[1])
        #expect(order == [1, 3, 4])
    }

    @Test func serialDisposableDisposesWhatItReplaces() {
        let serial = SerialDisposable()
        let first = ActionDisposable(), second = ActionDisposable(), third = ActionDisposable()
        serial.inner = first
        serial.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        serial.dispose()
        #expect(second.isDisposed)
        serial.inner = third
        #expect(third.isDisposed)
    }
}
