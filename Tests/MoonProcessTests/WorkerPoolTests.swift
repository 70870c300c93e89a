import Foundation
import MoonSystem
import Testing

/// The pool that runs moon's cache restores and remote requests off the
/// event loop: several pieces of work at once, never more than its width.
@Suite struct WorkerPoolTests {
    /// Counts work in progress, and the most at once.
    final class Gauge: @unchecked Sendable {
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        func enter() { lock.lock(); now += 1; most = max(most, now); lock.unlock() }
        func leave() { lock.lock(); now -= 1; lock.unlock() }
        var current: Int { lock.lock(); defer { lock.unlock() }; return now }
    }

    @Test func workRunsSeveralAtOnceUpToItsWidth() {
        let pool = WorkerPool(name: "test.pool", width: 3)
        let gauge = Gauge()
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<6 {
            pool.run {
                gauge.enter()
                // Held until the test has seen three at once (or gives up).
                _ = release.wait(timeout: .now() + 30)
                gauge.leave()
            }
        }
        #expect(eventually { gauge.current == 3 }, "three pieces of work never ran at once")
        for _ in 0..<6 { release.signal() }
        pool.wait()
        #expect(gauge.most == 3)
        #expect(gauge.current == 0)
    }

    @Test func waitReturnsWhenNothingIsLeft() {
        let pool = WorkerPool(name: "test.pool", width: 2)
        pool.wait()
        let lock = NSLock()
        var done = 0
        for _ in 0..<20 { pool.run { lock.lock(); done += 1; lock.unlock() } }
        pool.wait()
        lock.lock()
        #expect(done == 20)
        lock.unlock()
    }

    /// Work given piece by piece, each done before the next comes (the
    /// runner's checks), is taken by the thread that is there: a new thread
    /// for each piece made the checks of a header edit start 300 threads.
    @Test func workGivenPieceByPieceIsTakenByTheThreadThatIsThere() {
        let pool = WorkerPool(name: "test.pool", width: 4)
        let lock = NSLock()
        // A mark in each thread's own storage: a new thread starts without it.
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        defer { pthread_key_delete(key) }
        var threads = 0
        for _ in 0..<100 {
            let done = DispatchSemaphore(value: 0)
            pool.run { [key] in
                if pthread_getspecific(key) == nil {
                    pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
                    lock.lock(); threads += 1; lock.unlock()
                }
                done.signal()
            }
            done.wait()
        }
        pool.wait()
        lock.lock()
        #expect(threads <= 10, "\(threads) threads for 100 pieces of work")
        lock.unlock()
    }

    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
}
