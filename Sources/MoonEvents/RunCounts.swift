/// How many nodes of a run ended each way (`graph-complete`'s counts).
public struct RunCounts: Sendable, Equatable {
    public var succeeded = 0
    public var failed = 0
    public var skipped = 0
    public var canceled = 0
    public init() {}
}
