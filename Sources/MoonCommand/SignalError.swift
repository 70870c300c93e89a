import Foundation

/// Errors the signal operators raise themselves.
public enum SignalError: Error, Equatable, CustomStringConvertible {
    /// `timeout` fired: the signal did not terminate within the interval.
    case timedOut(after: Duration)
    /// A shared (`replay`) upstream was canceled because every subscriber
    /// left before it ended; it is never restarted.
    case canceled

    public var description: String {
        switch self {
        case let .timedOut(interval): return "timed out after \(interval.timeInterval)s"
        case .canceled: return "canceled"
        }
    }
}
