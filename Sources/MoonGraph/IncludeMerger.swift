/// Puts an included graph's nodes into the including graph: each name
/// (and template) under `NAME:`, needs shifted to their new positions, the
/// file's vars and env kept with its nodes, its relative paths (`dir`,
/// `sources`, `generates`) made relative to the including file, and its
/// queues matched to the including graph's by name (new ones added).
enum IncludeMerger {
    static func merge(_ include: IncludedGraph, into nodes: inout [Node], names: inout [String], index: inout [String: Int],
                      ranges: inout [String: Range<Int>], queues: inout [QueueSpec]) {
        let offset = nodes.count
        let prefix = include.name + ":"
        let graph = include.graph
        let queueMap = graph.queues.map { queue -> Int in
            if let i = queues.firstIndex(where: { $0.name == queue.name }) { return i }
            queues.append(queue)
            return queues.count - 1
        }
        let directory = include.directory
        nodes.reserveCapacity(offset + graph.nodes.count)
        for var node in graph.nodes {
            node.name = prefix + node.name
            node.namespace = prefix + node.namespace
            if let template = node.instance?.template { node.instance?.template = prefix + template }
            for i in node.needs.indices { node.needs[i] += offset }
            node.fanOut?.need += offset
            if node.vars == nil { node.vars = graph.vars }
            if !graph.env.isEmpty { node.env = graph.env.merging(node.env) }
            node.queue = queueMap[node.queue]
            if directory != "." {
                node.dir = IncludeLoader.join(directory, node.dir ?? "")
                node.sources = node.sources.map { path($0, under: directory) }
                node.generates = node.generates.map { path($0, under: directory) }
            }
            // A barrier is named as its template, which names the instances.
            if !node.isBarrier { index[node.name] = nodes.count }
            names.append(node.name)
            nodes.append(node)
        }
        for template in graph.templateNames {
            let instances = graph.instances(of: template)
            if let first = instances.first, let last = instances.last { ranges[prefix + template] = (first + offset)..<(last + 1 + offset) }
        }
    }

    /// A glob relative to the included file, made relative to the including one (a `!` exclusion keeps its `!`).
    private static func path(_ pattern: String, under directory: String) -> String {
        if pattern.hasPrefix("!") { return "!" + path(String(pattern.dropFirst()), under: directory) }
        return IncludeLoader.join(directory, pattern)
    }
}
