/// Finds dependency cycles without recursion (an iterative Tarjan), so a
/// 100,000-node chain cannot overflow the stack. Linear in nodes + edges.
public enum CycleFinder {
    /// One cycle per strongly connected component of more than one node
    /// (self-edges are ignored): the path starts at the component's first
    /// node (lowest index) and follows edges back to it, which is not repeated
    /// at the end. Cycles are ordered by their first node.
    public static func cycles(successors: [[Int]]) -> [[Int]] {
        let components = stronglyConnectedComponents(successors: successors)
        // In each component, the shortest path from its first node back to itself (breadth-first).
        var member = [Int](repeating: -1, count: successors.count)
        var parent = [Int](repeating: -1, count: successors.count)
        var result: [[Int]] = []
        for (c, component) in components.enumerated() {
            for v in component { member[v] = c }
            let start = component.min()!
            var queue = [start]
            var head = 0
            var seen = Set<Int>([start])
            var last = -1
            search: while head < queue.count {
                let u = queue[head]; head += 1
                for w in successors[u] where member[w] == c && w != u {
                    if w == start { last = u; break search }
                    if seen.insert(w).inserted { parent[w] = u; queue.append(w) }
                }
            }
            var path: [Int] = []
            var v = last
            while v != start && v != -1 { path.append(v); v = parent[v] }
            path.append(start)
            result.append(path.reversed())
        }
        return result.sorted { $0[0] < $1[0] }
    }

    /// Tarjan's components of more than one node, with an explicit stack of frames.
    private static func stronglyConnectedComponents(successors: [[Int]]) -> [[Int]] {
        let n = successors.count
        var index = [Int](repeating: -1, count: n)
        var low = [Int](repeating: 0, count: n)
        var onStack = [Bool](repeating: false, count: n)
        var stack: [Int] = []
        var counter = 0
        var components: [[Int]] = []
        var frames: [(node: Int, edge: Int)] = []

        for root in 0..<n where index[root] == -1 {
            index[root] = counter; low[root] = counter; counter += 1
            stack.append(root); onStack[root] = true
            frames.append((root, 0))
            while let frame = frames.last {
                let v = frame.node
                if frame.edge < successors[v].count {
                    frames[frames.count - 1].edge += 1
                    let w = successors[v][frame.edge]
                    if w == v { continue }
                    if index[w] == -1 {
                        index[w] = counter; low[w] = counter; counter += 1
                        stack.append(w); onStack[w] = true
                        frames.append((w, 0))
                    } else if onStack[w] {
                        low[v] = min(low[v], index[w])
                    }
                } else {
                    frames.removeLast()
                    if let parent = frames.last { low[parent.node] = min(low[parent.node], low[v]) }
                    if low[v] == index[v] {
                        var component: [Int] = []
                        while let w = stack.popLast() {
                            onStack[w] = false
                            component.append(w)
                            if w == v { break }
                        }
                        if component.count > 1 { components.append(component) }
                    }
                }
            }
        }

        return components
    }
}
