/// Receives the events of a signal.
///
/// An observer is one closure; the serialisation guarantees of ``Signal``
/// are enforced where events enter a chain, not here.
public struct Observer<Value>: Sendable {
    let action: @Sendable (Event<Value>) -> Void

    /// An observer that hands every event to `action`.
    public init(_ action: @escaping @Sendable (Event<Value>) -> Void) {
        self.action = action
    }

    /// An observer with one optional closure per kind of event.
    public init(
        next: (@Sendable (Value) -> Void)? = nil,
        error: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) {
        self.action = { event in
            switch event {
            case let .next(value): next?(value)
            case let .error(failure): error?(failure)
            case .completed: completed?()
            }
        }
    }

    /// Sends one event.
    public func send(_ event: Event<Value>) { action(event) }

    /// Sends a value.
    public func send(next value: Value) { action(.next(value)) }

    /// Ends the signal with an error.
    public func send(error: Error) { action(.error(error)) }

    /// Ends the signal successfully.
    public func sendCompleted() { action(.completed) }
}
