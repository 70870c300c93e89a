import Dispatch
import Foundation
import MoonCommand

/// Records events thread-safely, as strings that read well in `#expect`.
final class Recorder<Value> {
    private let lock = NSLock()
    private var recorded: [Event<Value>] = []
    private let done = DispatchSemaphore(value: 0)

    var observer: Observer<Value> {
        Observer { event in
            self.lock.lock()
            self.recorded.append(event)
            self.lock.unlock()
            if event.isTerminal { self.done.signal() }
        }
    }

    var events: [Event<Value>] {
        lock.lock(); defer { lock.unlock() }
        return recorded
    }

    var log: [String] { events.map { $0.description } }
    var values: [Value] { events.compactMap { $0.value } }
    var isTerminated: Bool { events.last?.isTerminal ?? false }

    /// Waits (with a generous bound) for the terminal event; for tests on
    /// real queues.
    @discardableResult
    func waitForTerminal(seconds: Double = 10) -> Bool {
        if done.wait(timeout: .now() + seconds) == .timedOut { return false }
        done.signal()
        return true
    }
}

struct TestError: Error, Equatable, CustomStringConvertible {
    var id = 0
    var description: String { "TestError(\(id))" }
}

/// A signal fed by hand: `send` goes to every active subscriber; counts
/// starts and disposals so tests can see cold/shared behaviour.
final class Subject<Value> {
    private let lock = NSLock()
    private var observers: [Int: Observer<Value>] = [:]
    private var nextID = 0
    private(set) var starts = 0
    private(set) var disposals = 0

    var signal: Signal<Value> {
        Signal { observer, lifetime in
            self.lock.lock()
            let id = self.nextID
            self.nextID += 1
            self.starts += 1
            self.observers[id] = observer
            self.lock.unlock()
            lifetime.add {
                self.lock.lock()
                self.observers[id] = nil
                self.disposals += 1
                self.lock.unlock()
            }
        }
    }

    func send(_ event: Event<Value>) {
        lock.lock()
        let current = Array(observers.values)
        lock.unlock()
        for observer in current { observer.send(event) }
    }

    func send(next value: Value) { send(.next(value)) }
    func sendCompleted() { send(.completed) }
    func send(error: Error) { send(.error(error)) }

    var observerCount: Int {
        lock.lock(); defer { lock.unlock() }
        return observers.count
    }
}
