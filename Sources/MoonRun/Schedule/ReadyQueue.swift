/// The ready nodes of one queue, highest priority first, ties in file order
/// (lower index). A binary heap: the runner pops from it once per start.
struct ReadyQueue {
    private var heap: [Int] = []
    private let priority: [Int]

    init(priority: [Int]) {
        self.priority = priority
    }

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var first: Int? { heap.first }

    /// True when `a` should start before `b`.
    private func before(_ a: Int, _ b: Int) -> Bool {
        priority[a] != priority[b] ? priority[a] > priority[b] : a < b
    }

    mutating func push(_ node: Int) {
        heap.append(node)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Int? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < heap.count, before(heap[left], heap[best]) { best = left }
                if right < heap.count, before(heap[right], heap[best]) { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        return top
    }

    mutating func removeAll() -> [Int] {
        defer { heap.removeAll() }
        return heap
    }
}
