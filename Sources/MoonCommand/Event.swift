/// One event of a signal.
///
/// A signal's events follow the grammar `next* (error | completed)?`:
/// any number of values, then at most one terminal event, after which
/// nothing is ever delivered. See ``Signal`` for the full contract.
public enum Event<Value> {
    /// A value.
    case next(Value)
    /// The signal failed; terminal.
    case error(Error)
    /// The signal finished successfully; terminal.
    case completed

    /// Whether this event ends the signal.
    public var isTerminal: Bool {
        if case .next = self { return false }
        return true
    }

    /// The value of a `.next` event.
    public var value: Value? {
        if case let .next(value) = self { return value }
        return nil
    }

    /// The error of an `.error` event.
    public var error: Error? {
        if case let .error(error) = self { return error }
        return nil
    }

    /// The same event with its value transformed.
    public func map<U>(_ transform: (Value) throws -> U) rethrows -> Event<U> {
        switch self {
        case let .next(value): return .next(try transform(value))
        case let .error(error): return .error(error)
        case .completed: return .completed
        }
    }
}

extension Event: Sendable where Value: Sendable {}

extension Event: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .next(value): return "next(\(value))"
        case let .error(error): return "error(\(error))"
        case .completed: return "completed"
        }
    }
}
