/// An ordered list of name/value pairs (`vars`, `env`): file order is kept so
/// that listings and environments are deterministic, and lookup is by name.
public struct Variables: Sendable, Hashable, Sequence {
    public struct Entry: Sendable, Hashable, Codable {
        public var name: String
        /// The value; for a list, its items joined by spaces (how it reads inside a larger string).
        public var value: String
        /// A list value (`CFLAGS: [-O2, -Wall]`): where interpolated as a
        /// whole word, each item is one word. nil for a scalar.
        public var items: [String]?
        public init(name: String, value: String, items: [String]? = nil) {
            self.name = name
            self.value = value
            self.items = items
        }
    }

    public private(set) var entries: [Entry] = []
    private var positions: [String: Int] = [:]

    public init() {}

    public init(_ entries: [Entry]) {
        for entry in entries {
            if let items = entry.items { setList(entry.name, items) } else { self[entry.name] = entry.value }
        }
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
                    entries[position].items = nil
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

    /// The list value of `name`, nil when it is a scalar or unset.
    public func items(_ name: String) -> [String]? { positions[name].flatMap { entries[$0].items } }

    /// Sets `name` to a list value (its string value is the items joined by spaces).
    public mutating func setList(_ name: String, _ items: [String]) {
        self[name] = items.joined(separator: " ")
        if let position = positions[name] { entries[position].items = items }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var names: [String] { entries.map(\.name) }

    /// These entries, then `other`'s: a name in both takes `other`'s value at its first position.
    public func merging(_ other: Variables) -> Variables {
        var result = self
        for entry in other.entries {
            if let items = entry.items { result.setList(entry.name, items) } else { result[entry.name] = entry.value }
        }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    public static func == (a: Variables, b: Variables) -> Bool { a.entries == b.entries }
    public func hash(into hasher: inout Hasher) { hasher.combine(entries) }
}

/// Coded as its entries; the name index is rebuilt from them
/// (`BinaryCodingTests` checks that these two are all it stores).
extension Variables: Codable {
    public init(from decoder: Decoder) throws {
        self.init(entries: try [Entry](from: decoder))
    }

    /// Entries written by a `Variables` (names unique), taken as they are.
    init(entries: [Entry]) {
        guard !entries.isEmpty else { return }
        self.entries = entries
        positions.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() where positions[entry.name] == nil { positions[entry.name] = i }
    }

    public func encode(to encoder: Encoder) throws { try entries.encode(to: encoder) }
}
