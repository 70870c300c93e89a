/// A queue of the plan and how many of its nodes may run at once.
public struct QueueWidth: Sendable, Equatable {
    public var name: String
    public var concurrency: Int
    public init(name: String, concurrency: Int) {
        self.name = name
        self.concurrency = concurrency
    }
}
