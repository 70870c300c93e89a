/// Why a node did not run (`skip`'s reason).
public enum SkipReason: String, Sendable {
    case upstreamFailed = "upstream-failed"
    case condition
    case upToDate = "up-to-date"
    case canceled
}
