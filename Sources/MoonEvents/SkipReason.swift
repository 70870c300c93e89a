/// Why a node did not run (`skip`'s reason).
public enum SkipReason: String, Sendable {
    case upstreamFailed = "upstream-failed"
    case condition
    case upToDate = "up-to-date"
    /// Its outputs and values were restored from the output cache.
    case cacheHit = "cache-hit"
    /// `moon run --resume`: it succeeded in the run being resumed, and
    /// nothing it needs ran since; its recorded outputs and values stand.
    case resumed
    case canceled
    /// Its `confirm:` question was answered no, or a need of it was declined.
    case declined
}
