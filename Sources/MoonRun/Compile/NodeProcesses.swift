import MoonCommand
import MoonEvents
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
    /// What the reaped processes of each node used, its attempts added up,
    /// until the runner takes it (`takeUsage`). Guarded by `lock`.
    private var usages: [Int: NodeUsage] = [:]

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

    /// It was reaped (having used `usage`, when the launcher measured it), or could not be launched.
    func ended(_ node: Int, usage: ProcessUsage? = nil, source: NodeUsage.Source = .rusage) {
        let waiters: [() -> Void] = lock.withLock { _ in
            if let usage { add(usage, source: source, to: node) }
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

    /// Call with `lock` held.
    private func add(_ usage: ProcessUsage, source: NodeUsage.Source, to node: Int) {
        let measured = NodeUsage(cpuUserMilliseconds: Int(usage.userMicroseconds / 1000),
                                 cpuSystemMilliseconds: Int(usage.systemMicroseconds / 1000),
                                 maxRSSBytes: usage.maxResidentBytes, source: source)
        if usages[node] == nil { usages[node] = measured } else { usages[node]!.add(measured) }
    }

    /// What `node`'s processes used, once they are all gone; forgotten here.
    func takeUsage(_ node: Int) -> NodeUsage? {
        lock.withLock { _ in usages.removeValue(forKey: node) }
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
