/// Receives the events of a signal.
///
/// An observer is a thin wrapper around one closure; it is a struct so that
/// passing events down a chain of operators costs a closure call, not a
/// reference count and a lock per stage. The serialisation guarantees of
/// ``Signal`` are enforced where events enter a chain, not here.
public struct Observer<Value> {
    @usableFromInline
    let action: (Event<Value>) -> Void

    /// An observer that hands every event to `action`.
    public init(_ action: @escaping (Event<Value>) -> Void) {
        self.action = action
    }

    /// An observer with one optional closure per kind of event.
    public init(
        next: ((Value) -> Void)? = nil,
        error: ((Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
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
    @inlinable
    public func send(_ event: Event<Value>) { action(event) }

    /// Sends a value.
    @inlinable
    public func send(next value: Value) { action(.next(value)) }

    /// Ends the signal with an error.
    @inlinable
    public func send(error: Error) { action(.error(error)) }

    /// Ends the signal successfully.
    @inlinable
    public func sendCompleted() { action(.completed) }
}
