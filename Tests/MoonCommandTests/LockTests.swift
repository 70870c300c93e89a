import Dispatch
import MoonCommand
import Testing

@Suite struct LockTests {
    @Test func waitReturnsOnceAnotherThreadBroadcastsItsChange() {
        let lock = Lock()
        let ready = Locked(false)
        DispatchQueue.global().async {
            lock.withLock { ready.withLock { $0 = true } }
            lock.broadcast()
        }
        lock.lock()
        while !ready.withLock({ $0 }) { lock.wait() }
        lock.unlock()
        #expect(ready.withLock { $0 })
    }

    @Test func waitWithATimeoutGivesUpWhenNobodyWakesIt() {
        let lock = Lock()
        lock.lock()
        let woken = lock.wait(timeout: .milliseconds(10))
        lock.unlock()
        #expect(!woken)
    }
}
