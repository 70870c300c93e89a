import Dispatch
import MoonCommand

/// Work for whichever thread comes to it first: done once, either by a
/// helper thread (`runIfFree`) or by the thread that needs its value
/// (`value`), which then does the work itself instead of waiting for a
/// helper still busy with something else.
///
/// Why: moon's start has a few such pieces (opening the store, parsing the
/// command line, making the outputs directory). One thread each made four
/// runnable threads on two CPUs, and the scheduler now and then left the
/// store's thread waiting for milliseconds behind the others; one helper
/// that works through them, with the main thread taking what the helper
/// has not reached, keeps two threads busy and none waiting.
public final class SharedJob<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var body: (() -> Value)?
    private var result: Value?
    private let done = DispatchSemaphore(value: 0)

    public init(_ body: @escaping () -> Value) {
        self.body = body
    }

    /// Does the job here unless a thread has taken it already.
    public func runIfFree() {
        guard let body = take() else { return }
        let value = body()
        lock.withLock { result = value }
        done.signal()
    }

    /// The job's value: worked out here if no thread has taken the job yet,
    /// else waited for.
    public var value: Value {
        runIfFree()
        done.wait()
        done.signal()
        // Set before `done` was signalled.
        return lock.withLock { result }!
    }

    private func take() -> (() -> Value)? {
        lock.withLock {
            defer { body = nil }
            return body
        }
    }
}
