/// The storage of one loaded YAML document: every node is an entry of one
/// array, a collection's children are a range of indices in another, and a
/// scalar's text is an element of a third. A `YAMLNode` is an index into it.
///
/// A graph file has tens of thousands of nodes; held this way, a document
/// costs a few allocations to build and to free, not one object per scalar.
/// It is immutable once built (`Writer` builds it), so it can be shared
/// across threads.
public final class YAMLTree: Sendable {
    enum Shape: UInt8, Sendable {
        case scalar, sequence, mapping
    }

    struct Entry: Sendable {
        var start: SourceLocation
        var end: SourceLocation
        /// A scalar's index in `texts`; a collection's first index in `children`.
        var first: UInt32
        /// A collection's number of children (a mapping's keys and values, interleaved).
        var count: UInt32
        /// See `YAMLNode.nodeCount`.
        var nodeCount: Int
        var shape: Shape
        var style: YAMLNode.ScalarStyle
        var tagged: Bool
        /// A scalar YAML reads as null; see `YAMLNode.isNull`.
        var isNull: Bool
    }

    let file: String
    let entries: [Entry]
    let texts: [String]
    /// Explicit tags by entry index: few documents have any.
    let tags: [UInt32: String]
    let children: [UInt32]
    /// The entries an alias made (`Writer.alias`), each with the node it
    /// repeats: few documents have any.
    let origins: [UInt32: UInt32]

    fileprivate init(_ writer: Writer) {
        file = writer.file
        entries = writer.entries
        texts = writer.texts
        tags = writer.tags
        children = writer.children
        origins = writer.origins
    }

    /// The node `index` repeats when an alias made it, else `index`: an
    /// alias is the same node as its anchor.
    func origin(_ index: UInt32) -> UInt32 { origins[index] ?? index }

    /// Appends entries to a tree under construction. Indices handed out stay
    /// valid: entries are only ever appended.
    struct Writer {
        let file: String
        private(set) var entries: [Entry] = []
        private(set) var texts: [String] = []
        private(set) var tags: [UInt32: String] = [:]
        private(set) var children: [UInt32] = []
        private(set) var origins: [UInt32: UInt32] = [:]

        init(file: String) {
            self.file = file
        }

        mutating func scalar(_ text: String, style: YAMLNode.ScalarStyle, tag: String?,
                             start: SourceLocation, end: SourceLocation) -> UInt32 {
            let index = UInt32(truncatingIfNeeded: entries.count)
            if let tag { tags[index] = tag }
            entries.append(Entry(start: start, end: end, first: UInt32(truncatingIfNeeded: texts.count), count: 0,
                                 nodeCount: 1, shape: .scalar, style: style, tagged: tag != nil,
                                 isNull: Self.isNull(text, style: style, tag: tag)))
            texts.append(text)
            return index
        }

        /// A sequence of `items`, or a mapping of `items` read as keys and values in turn.
        mutating func collection(mapping: Bool, _ items: some Collection<UInt32>,
                                 start: SourceLocation, end: SourceLocation) -> UInt32 {
            let index = UInt32(truncatingIfNeeded: entries.count)
            let first = UInt32(truncatingIfNeeded: children.count)
            var total = 1
            for item in items { total = YAMLNode.saturatingAdd(total, entries[Int(item)].nodeCount) }
            children.append(contentsOf: items)
            entries.append(Entry(start: start, end: end, first: first, count: UInt32(truncatingIfNeeded: items.count),
                                 nodeCount: total, shape: mapping ? .mapping : .sequence, style: .plain, tagged: false,
                                 isNull: false))
            return index
        }

        /// An alias of `node`: the same node (its text, or its children,
        /// shared, not copied) at the alias's own place in the file, so
        /// that an error about the value points where the alias is used.
        mutating func alias(of node: UInt32, start: SourceLocation, end: SourceLocation) -> UInt32 {
            let index = UInt32(truncatingIfNeeded: entries.count)
            var entry = entries[Int(node)]
            entry.start = start
            entry.end = end
            if entry.tagged, let tag = tags[node] { tags[index] = tag }
            entries.append(entry)
            origins[index] = origin(node)
            return index
        }

        func origin(_ index: UInt32) -> UInt32 { origins[index] ?? index }

        mutating func reserve(nodes: Int) {
            entries.reserveCapacity(nodes)
            texts.reserveCapacity(nodes)
            children.reserveCapacity(nodes)
        }

        /// A plain untagged `~`, `null` (any of three spellings) or nothing, or a scalar tagged `!!null`.
        static func isNull(_ text: String, style: YAMLNode.ScalarStyle, tag: String?) -> Bool {
            if let tag { return tag == "tag:yaml.org,2002:null" }
            guard style == .plain else { return false }
            // By length first: this runs for every scalar of the document.
            switch text.utf8.count {
            case 0: return true
            case 1: return text == "~"
            case 4: return text.utf8.first == UInt8(ascii: "n") || text.utf8.first == UInt8(ascii: "N")
                ? text == "null" || text == "Null" || text == "NULL" : false
            default: return false
            }
        }

        func entry(_ index: UInt32) -> Entry { entries[Int(index)] }

        func text(_ index: UInt32) -> String { texts[Int(entries[Int(index)].first)] }

        func children(of index: UInt32) -> ArraySlice<UInt32> {
            let entry = entries[Int(index)]
            return children[Int(entry.first)..<Int(entry.first) + Int(entry.count)]
        }

        /// Appends every entry of `tree` (unreachable ones too), so that its
        /// nodes keep their sharing; returns what to add to its indices.
        mutating func append(_ tree: YAMLTree) -> UInt32 {
            let offset = UInt32(truncatingIfNeeded: entries.count)
            let textOffset = UInt32(truncatingIfNeeded: texts.count)
            let childOffset = UInt32(truncatingIfNeeded: children.count)
            for (index, var entry) in tree.entries.enumerated() {
                entry.first += entry.shape == .scalar ? textOffset : childOffset
                if let tag = tree.tags[UInt32(truncatingIfNeeded: index)] { tags[offset + UInt32(truncatingIfNeeded: index)] = tag }
                entries.append(entry)
            }
            texts.append(contentsOf: tree.texts)
            children.append(contentsOf: tree.children.lazy.map { $0 + offset })
            for (alias, node) in tree.origins { origins[alias + offset] = node + offset }
            return offset
        }

        func finish() -> YAMLTree {
            YAMLTree(self)
        }
    }
}
