import Dispatch
import Foundation
import MoonCommand
import Testing

@Suite struct StressTests {
    /// Many threads send into and dispose many subscriptions at once; run
    /// under TSan (`make tsan`) this checks the locking, and in any build
    /// it checks the grammar holds: at most one terminal, nothing after it.
    @Test func manyThreadsSendingAndDisposing() {
        let rounds = 200
        let lock = NSLock()
        nonisolated(unsafe) var violations = 0
        DispatchQueue.concurrentPerform(iterations: rounds) { round in
            nonisolated(unsafe) var send: Observer<Int>?
            let ready = DispatchSemaphore(value: 0)
            let signal = Signal<Int> { observer, _ in send = observer; ready.signal() }
                .map { $0 + 1 }
                .merge(with: .never)
                .deliverOn(QueueScheduler(queue: DispatchQueue(label: "stress", attributes: .concurrent)))
            nonisolated(unsafe) var terminated = false
            nonisolated(unsafe) var inside = false
            let eventLock = NSLock()
            let subscription = signal.start { event in
                eventLock.lock()
                if terminated || inside { lock.lock(); violations += 1; lock.unlock() }
                inside = true
                eventLock.unlock()
                eventLock.lock()
                inside = false
                if event.isTerminal { terminated = true }
                eventLock.unlock()
            }
            ready.wait()
            let observer = send!
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for i in 0..<50 {
                    observer.send(next: i)
                    if thread == 0 && i == 25 { subscription.dispose() }
                    if thread == 1 && i == 40 && round % 2 == 0 { observer.send(error: TestError()) }
                }
            }
            observer.sendCompleted()
        }
        #expect(violations == 0)
    }

    @Test func propertyWritesFromManyThreadsArriveInOrder() {
        let property = MutableProperty(0)
        let lock = NSLock()
        nonisolated(unsafe) var seen: [Int] = []
        let subscription = property.signal.start { event in
            if let value = event.value { lock.lock(); seen.append(value); lock.unlock() }
        }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 { property.modify { $0 += 1 } }
        }
        subscription.dispose()
        lock.lock(); defer { lock.unlock() }
        #expect(seen == Array(0...4_000))
    }
}
