/// What a command's `run` sends its results to.
///
/// Thread-safe; callable from any thread, any number of times. Only the
/// first terminal call (`complete` or `error`) counts; anything after it,
/// or after the execution was canceled, is ignored. Calls reach observers
/// in order, never concurrently.
public final class CommandResult<Output> {
    private let observer: Observer<Output>
    private let lifetime: CompositeDisposable

    init(observer: Observer<Output>, lifetime: CompositeDisposable) {
        self.observer = observer
        self.lifetime = lifetime
    }

    /// Sends a value.
    public func next(_ value: Output) { observer.send(next: value) }

    /// Ends the execution successfully.
    public func complete() { observer.sendCompleted() }

    /// Ends the execution with an error.
    public func error(_ error: Error) { observer.send(error: error) }

    /// Sends a value and completes.
    public func complete(with value: Output) {
        next(value)
        complete()
    }

    /// Whether the execution still runs: false once it ended or was
    /// canceled. Long synchronous work can poll it.
    public var isActive: Bool { !lifetime.isDisposed }

    /// Runs `action` when the execution ends, by completion, error or
    /// cancellation (at once if it already has). An alternative to
    /// returning a cancelable from `run`.
    public func onEnd(_ action: @escaping () -> Void) {
        lifetime.add(action)
    }
}
