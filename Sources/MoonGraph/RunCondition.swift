/// When a node runs, given how its needs ended (`if:` in the file).
public enum RunCondition: String, Sendable, Hashable, CaseIterable, Codable {
    /// Every need succeeded (the default).
    case success
    /// At least one need failed.
    case failure
    /// Every need has finished, whatever happened.
    case always
}
