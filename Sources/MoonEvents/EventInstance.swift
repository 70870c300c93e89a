extension RunEvent {
    /// What makes a node one instance of a fan-out (a `for-each` over a
    /// list, a glob or a need's output, or a `matrix` combination): the
    /// template it was made from, and its item or matrix values. Its name is
    /// `TEMPLATE[LABEL]` (`obj[src/a.c]`, `test[unit,O2]`); node names never
    /// contain `[`, so the name alone says which template it belongs to.
    public struct Instance: Sendable, Equatable {
        /// The name of the template the instance was made from.
        public var template: String
        /// A `for-each` instance's item; nil for a matrix instance.
        public var item: String?
        /// A matrix instance's values, in the matrix's key order (empty for a `for-each` item).
        public var matrix: [KeyValue]

        public init(template: String, item: String? = nil, matrix: [KeyValue] = []) {
            self.template = template
            self.item = item
            self.matrix = matrix
        }

        /// The template of an instance's name (what comes before its first
        /// `[`); nil for the name of a node that is no instance.
        public static func template(ofName name: String) -> Substring? {
            guard name.utf8.last == UInt8(ascii: "]"), let open = name.firstIndex(of: "[") else { return nil }
            return name[..<open]
        }
    }
}
