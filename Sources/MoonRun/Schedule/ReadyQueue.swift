import HeapModule

/// The ready nodes of one queue, highest priority first, ties in file order
/// (lower index). The runner pops from it once per start.
struct ReadyQueue {
    /// Orders nodes so that the one to start first is the heap's maximum.
    private struct Entry: Comparable {
        let priority: Int
        let node: Int

        static func < (a: Entry, b: Entry) -> Bool {
            a.priority != b.priority ? a.priority < b.priority : a.node > b.node
        }
    }

    private var heap = Heap<Entry>()
    private let priority: [Int]

    init(priority: [Int]) {
        self.priority = priority
    }

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var first: Int? { heap.max?.node }

    mutating func push(_ node: Int) {
        heap.insert(Entry(priority: priority[node], node: node))
    }

    mutating func pop() -> Int? {
        heap.popMax()?.node
    }

    /// Empties the queue; returns its nodes in no particular order.
    mutating func removeAll() -> [Int] {
        defer { heap = Heap() }
        return heap.unordered.map(\.node)
    }
}
