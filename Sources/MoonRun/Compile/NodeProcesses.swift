import MoonCommand
import MoonProcess
import Synchronization

/// The processes that each node's attempts started and that are not yet
/// reaped. A cancelled or timed-out attempt's process group lives on
/// through its grace period after the attempt's subscription is gone; the
/// node's next attempt and its queue slot wait for it here (`settled`).
///
/// Its calls come from the event loop (launches and exits), and `settled`
/// from the runner's scheduler: a lock per launch and exit, none per event.
final class NodeProcesses: @unchecked Sendable {
    private struct Entry {
        var count = 0
        var handles: [ProcessHandle] = []
        var waiters: [() -> Void] = []
    }

    private let lock = Mutex(())
    // Guarded by `lock`; only nodes with live processes or waiters have an entry.
    private var entries: [Int: Entry] = [:]

    /// A process of `node` is about to be launched.
    func launching(_ node: Int) {
        lock.withLock { _ in entries[node, default: Entry()].count += 1 }
    }

    /// It was launched: `killAll` can reach it.
    func launched(_ node: Int, _ handle: ProcessHandle) {
        lock.withLock { _ in
            guard entries[node] != nil else { return }
            entries[node]!.handles.append(handle)
        }
    }

    /// It was reaped, or could not be launched.
    func ended(_ node: Int) {
        let waiters: [() -> Void] = lock.withLock { _ in
            guard var entry = entries[node] else { return [] }
            entry.count -= 1
            if entry.count > 0 {
                entries[node] = entry
                return []
            }
            entries[node] = nil
            return entry.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Completes once no process of `node` is left (at once when none is).
    func settled(_ node: Int) -> Signal<Never> {
        Signal { [self] observer, _ in
            let now: Bool = lock.withLock { _ in
                guard entries[node] != nil else { return true }
                entries[node]!.waiters.append { observer.sendCompleted() }
                return false
            }
            if now { observer.sendCompleted() }
        }
    }

    /// SIGKILLs every process still there.
    func killAll() {
        let handles = lock.withLock { _ in entries.values.flatMap(\.handles) }
        for handle in handles { handle.kill() }
    }
}
