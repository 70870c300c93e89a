/// One output of a node (`$MOON_OUTPUT`'s KEY=VALUE), in the order written.
public struct KeyValue: Sendable, Equatable {
    public var key: String
    public var value: String
    public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
    }
}
