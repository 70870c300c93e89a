/// The last `limit` lines of a node's output, kept to show with a failure.
struct OutputTail {
    let limit: Int
    private var ring: [String] = []
    private var next = 0
    /// Lines seen in all, including those no longer kept.
    private(set) var total = 0

    init(limit: Int) {
        self.limit = limit
    }

    mutating func append(_ line: String) {
        total += 1
        guard limit > 0 else { return }
        if ring.count < limit {
            ring.append(line)
        } else {
            ring[next] = line
            next = (next + 1) % limit
        }
    }

    var lines: [String] { Array(ring[next...] + ring[..<next]) }
}
