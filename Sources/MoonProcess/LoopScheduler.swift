import Foundation
import MoonCommand
import MoonEventLoop

/// A scheduler on moon's event loop (the process launcher's thread): the
/// runner, its commands and their callbacks all run there, so a child's
/// exit, the runner's decision and the next spawn need no thread hand-off.
/// Actions scheduled from the loop itself cost an append to a list.
///
/// `now` is the wall clock (for event times); delays use the monotonic
/// clock, so a wall-clock change does not stretch a timeout.
public final class LoopScheduler: DateScheduler {
    public let loop: EventLoop

    public init(loop: EventLoop) {
        self.loop = loop
    }

    public var now: Date { Date() }

    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable? {
        let token = ActionDisposable()
        loop.post {
            if !token.isDisposed { action() }
        }
        return token
    }

    /// No token to make: the action goes straight onto the loop's list.
    public func post(_ action: @escaping () -> Void) {
        loop.post(action)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Disposable? {
        let token = ActionDisposable()
        loop.post(afterNanoseconds: UInt64(delay.clampedNanoseconds())) {
            if !token.isDisposed { action() }
        }
        return token
    }
}
