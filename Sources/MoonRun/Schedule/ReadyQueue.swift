import HeapModule

/// The ready nodes of one queue, highest priority first, ties in file order
/// (lower index). The runner pops from it once per start.
struct ReadyQueue {
    /// One integer per entry, so that the heap's comparisons are single
    /// integer comparisons: the priority in the high 31 bits, the node's
    /// index inverted in the low 32, so the maximum is the highest priority
    /// and, among equals, the lowest index. Priorities are path lengths in
    /// recorded milliseconds: clamped at 2^31 - 1 (24 days), beyond which
    /// paths tie.
    private static func key(priority: Int, node: Int) -> Int {
        (min(max(priority, 0), Int(Int32.max)) << 32) | (Int(UInt32.max) - node)
    }

    private static func node(of key: Int) -> Int {
        Int(UInt32.max) - (key & Int(UInt32.max))
    }

    private var heap = Heap<Int>()

    init() {}

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var first: Int? { heap.max.map(Self.node(of:)) }

    mutating func push(_ node: Int, priority: Int) {
        heap.insert(Self.key(priority: priority, node: node))
    }

    mutating func pop() -> Int? {
        heap.popMax().map(Self.node(of:))
    }

    /// Its nodes in no particular order.
    var nodes: [Int] { heap.unordered.map(Self.node(of:)) }

    /// Removes `node`, wherever it is (a node started ahead of the head, Runner+Admission): O(n).
    mutating func remove(_ node: Int) {
        heap = Heap(heap.unordered.filter { Self.node(of: $0) != node })
    }

    /// Empties the queue; returns its nodes in no particular order.
    mutating func removeAll() -> [Int] {
        defer { heap = Heap() }
        return heap.unordered.map(Self.node(of:))
    }
}
