import Foundation
import MoonCommand
import MoonSystem

/// Runs up-to-date checks that are too slow for moon's event loop (see
/// `CheckInterruption`) one after another on a thread of their own, in the
/// order they came; its thread ends when nothing is left to do.
final class CheckWorker: @unchecked Sendable {
    private let lock = Lock()
    // Guarded by `lock`.
    private var queue: [() -> Void] = []
    private var running = false

    func run(_ work: @escaping () -> Void) {
        lock.lock()
        queue.append(work)
        let start = !running
        running = true
        lock.unlock()
        if start { BackgroundThread.run(name: "moon.check") { [self] in drain() } }
    }

    private func drain() {
        while true {
            lock.lock()
            guard !queue.isEmpty else {
                running = false
                lock.unlock()
                return
            }
            let work = queue.removeFirst()
            lock.unlock()
            work()
        }
    }
}
