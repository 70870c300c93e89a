/// Nodes the kernel killed for memory whose next attempt runs alone with
/// the whole memory budget (Runner+Admission). While one waits or holds it,
/// no other node starts, so the wait ends at the latest when what ran as
/// it began to wait has ended.
struct MemoryRetries {
    /// Nodes waiting for the whole budget, in the order they were killed.
    var waiting: [Int] = []
    /// The node holding the whole budget, until it ends.
    var holder: Int?
    /// Per waiting node whose next attempt already asked: what lets it start.
    var grants: [Int: () -> Void] = [:]

    var isIdle: Bool { waiting.isEmpty && holder == nil }

    func holds(_ node: Int) -> Bool { holder == node }
    func waits(_ node: Int) -> Bool { waiting.contains(node) }

    /// The node ended: it no longer waits nor holds.
    mutating func remove(_ node: Int) {
        if holder == node { holder = nil }
        waiting.removeAll { $0 == node }
        grants[node] = nil
    }
}
