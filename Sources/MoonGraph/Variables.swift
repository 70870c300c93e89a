/// An ordered list of name/value pairs (`vars`, `env`): file order is kept so
/// that listings and environments are deterministic, and lookup is by name.
public struct Variables: Sendable, Hashable, Sequence {
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var entries: [Entry] = []
    private var positions: [String: Int] = [:]

    public init() {}

    public init(_ entries: [Entry]) {
        for entry in entries { self[entry.name] = entry.value }
    }

    public init(_ pairs: KeyValuePairs<String, String>) {
        for (name, value) in pairs { self[name] = value }
    }

    /// Setting an existing name replaces its value in place; a new name is appended.
    public subscript(name: String) -> String? {
        get { positions[name].map { entries[$0].value } }
        set {
            if let position = positions[name] {
                if let newValue {
                    entries[position].value = newValue
                } else {
                    entries.remove(at: position)
                    positions = [:]
                    for (i, entry) in entries.enumerated() { positions[entry.name] = i }
                }
            } else if let newValue {
                positions[name] = entries.count
                entries.append(Entry(name: name, value: newValue))
            }
        }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var names: [String] { entries.map(\.name) }

    /// These entries, then `other`'s: a name in both takes `other`'s value at its first position.
    public func merging(_ other: Variables) -> Variables {
        var result = self
        for entry in other.entries { result[entry.name] = entry.value }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    public static func == (a: Variables, b: Variables) -> Bool { a.entries == b.entries }
    public func hash(into hasher: inout Hasher) { hasher.combine(entries) }
}
