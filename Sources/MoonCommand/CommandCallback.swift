/// What callbacks need to know about a command, whatever its types.
public protocol AnyCommand: AnyObject, Sendable {
    /// A name for logs and callbacks.
    var name: String { get }
}

/// An object that receives a command's callbacks (the delegate style of
/// the iOS seed). ``Command`` holds it weakly: once it is released,
/// callbacks stop.
///
/// Each execution calls `onNext` any number of times, then exactly one of
/// `onComplete` or `onError`, on the queue passed to `execute`.
public protocol CommandCallback<Output>: AnyObject, Sendable {
    /// The command's output type.
    associatedtype Output
    /// A value of the execution.
    func onNext(_ command: AnyCommand, value: Output)
    /// The execution completed.
    func onComplete(_ command: AnyCommand)
    /// The execution failed (including ``CommandError``s).
    func onError(_ command: AnyCommand, error: Error)
}

extension CommandCallback {
    public func onNext(_ command: AnyCommand, value: Output) {}
    public func onComplete(_ command: AnyCommand) {}
    public func onError(_ command: AnyCommand, error: Error) {}
}
