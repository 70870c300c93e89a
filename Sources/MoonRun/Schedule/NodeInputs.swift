/// What a node's needs left it, when its attempt starts: the values each
/// sent (in the order of its `needs`), and by need name, the outputs of each
/// that succeeded and how each ended (`needs.NODE.outputs.KEY`, `needs.NODE.result`).
public struct NodeInputs: Sendable {
    public var values: [[String]]
    /// The need names, in the order of `values`.
    public var needs: [String]
    /// need -> its outputs (only needs that succeeded have any).
    public var outputs: [String: [String: String]]
    /// need -> how it ended.
    public var results: [String: NeedResult]

    public init(values: [[String]], needs: [String] = [], outputs: [String: [String: String]] = [:],
                results: [String: NeedResult] = [:]) {
        self.values = values
        self.needs = needs
        self.outputs = outputs
        self.results = results
    }
}

/// How a need ended, as `${{ needs.NODE.result }}` reads it.
public enum NeedResult: String, Sendable {
    /// It succeeded, or was up to date.
    case success
    /// It failed (with or without `continue-on-error`).
    case failure
    case canceled
    case skipped
}
