// Rough throughput figures for MoonCommand; run with
// `swift run -c release --package-path examples/library-demo LibraryBench`.
// Not a test: timings depend on the machine and its load.
import Dispatch
import Foundation
import MoonCommand

func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func best(of runs: Int = 3, _ body: () -> Void) -> Double {
    (0..<runs).map { _ in seconds(body) }.min()!
}

// 1. Events through map + filter, one thread.
let count = 10_000_000
var received = 0
let source = Signal<Int> { observer, _ in
    for i in 0..<count { observer.send(next: i) }
    observer.sendCompleted()
}
let chain = source.map { $0 &* 3 }.filter { $0 & 1 == 0 }
let mapFilter = best {
    received = 0
    chain.start { event in if case .next = event { received += 1 } }
}
print(String(format: "map+filter: %.1f M events/s (%d events in %.3f s, %d passed)",
             Double(count) / mapFilter / 1e6, count, mapFilter, received))

// 2. The cost of subscribing: start and dispose a small chain.
let subscriptions = 200_000
let never = Signal<Int>.never.map { $0 + 1 }
let subscribe = best {
    for _ in 0..<subscriptions { never.start { _ in }.dispose() }
}
print(String(format: "subscribe+dispose: %.2f µs each", subscribe / Double(subscriptions) * 1e6))
let justChain = Signal.just(1).map { $0 + 1 }.filter { $0 > 0 }
let complete = best {
    for _ in 0..<subscriptions { justChain.start { _ in } }
}
print(String(format: "start just(1).map.filter to completion: %.2f µs each", complete / Double(subscriptions) * 1e6))

// 3. combineLatest over 10,000 signals.
let signals = (0..<10_000).map { Signal.just($0) }
var sum = 0
let combine = best {
    Signal.combineLatest(signals, reduce: { $0.reduce(0, +) }).start { event in
        if let value = event.value { sum = value }
    }
}
print(String(format: "combineLatest(10,000): %.1f ms (sum %d)", combine * 1e3, sum))

// 4. deliverOn a serial queue (the runner's delivery path).
let lines = 1_000_000
let delivery = DispatchQueue(label: "bench.delivery")
let deliver = best {
    let done = DispatchSemaphore(value: 0)
    Signal<Int> { observer, _ in
        for i in 0..<lines { observer.send(next: i) }
        observer.sendCompleted()
    }.deliverOn(QueueScheduler(queue: delivery)).start { event in
        if event.isTerminal { done.signal() }
    }
    done.wait()
}
print(String(format: "deliverOn(serial queue): %.1f M events/s", Double(lines) / deliver / 1e6))

// 5. The lock alone (two pairs per event is the serialisation cost).
let lock = Lock()
let pairs = 10_000_000
let locking = best {
    for _ in 0..<pairs { lock.lock(); lock.unlock() }
}
print(String(format: "Lock lock+unlock: %.1f ns", locking / Double(pairs) * 1e9))
