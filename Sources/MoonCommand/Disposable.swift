import Synchronization
/// Something that can be torn down: a subscription, a scheduled action,
/// the work of a command.
///
/// `dispose()` is idempotent and thread-safe; only the first call has an
/// effect. Disposing a subscription means no new event is delivered to its
/// observer afterwards (an event already being delivered on another thread
/// may finish).
public protocol Disposable: AnyObject, Sendable {
    /// Whether `dispose()` has been called (or the resource ended by itself).
    var isDisposed: Bool { get }
    /// Tears the resource down. Safe to call more than once, from any thread.
    func dispose()
}

/// The name the command API uses for a ``Disposable``: what `run` returns
/// and what `execute` hands back.
public typealias Cancelable = Disposable

extension Disposable {
    /// Same as `dispose()`; reads better for commands.
    public func cancel() { dispose() }
    /// Same as `isDisposed`.
    public var isCanceled: Bool { isDisposed }
}

/// A disposable that runs an action once, on the first `dispose()`;
/// without an action it is a plain flag (what schedulers hand out to cancel
/// a pending action).
public final class ActionDisposable: Disposable {
    /// The action while not yet disposed; nil inside once disposed.
    private let state: Mutex<(@Sendable () -> Void)??>

    /// A disposable that runs `action` when disposed.
    public init(_ action: (@Sendable () -> Void)? = nil) {
        state = Mutex(.some(action))
    }

    public var isDisposed: Bool {
        state.withLock { $0 == nil }
    }

    public func dispose() {
        let action = state.withLock { current -> (@Sendable () -> Void)? in
            guard let pending = current else { return nil }
            current = nil
            return pending
        }
        // Outside the lock: the action may dispose other things that lead
        // back here.
        action?()
    }
}

/// A disposable that disposes many others together.
///
/// Adding to an already disposed composite disposes the newcomer at once,
/// so a resource can never escape its owner's teardown. Children are
/// disposed in the order they were added.
public final class CompositeDisposable: Disposable {
    /// Identifies one child so it can be removed again (for long-lived
    /// composites whose children come and go, such as `flatMap`'s).
    public struct Token: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// The children in the order they were added, each with its token's
    /// id: ids only grow, so the array stays sorted by id, a removal finds
    /// its child by binary search, and disposal walks it in order, with no
    /// hashing or sorting on the path every subscription takes.
    private enum State {
        case active(next: Int, children: [(id: Int, disposable: Disposable)])
        case disposed
    }

    private let state: Mutex<State>

    /// An empty composite.
    public init() {
        state = Mutex(.active(next: 0, children: []))
    }

    /// A composite holding `disposables`.
    public init(_ disposables: [Disposable]) {
        let children = disposables.enumerated().map { (id: $0.offset, disposable: $0.element) }
        state = Mutex(.active(next: disposables.count, children: children))
    }

    public var isDisposed: Bool {
        state.withLock { if case .disposed = $0 { return true } else { return false } }
    }

    /// Adds a child; returns a token to remove it, or nil (after disposing
    /// `disposable`) when this composite is already disposed.
    @discardableResult
    public func add(_ disposable: Disposable?) -> Token? {
        guard let disposable else { return nil }
        let token = state.withLock { state -> Token? in
            guard case .active(let next, var children) = state else { return nil }
            state = .disposed // drop the array's reference so it is mutated in place
            children.append((next, disposable))
            state = .active(next: next + 1, children: children)
            return Token(id: next)
        }
        if token == nil { disposable.dispose() }
        return token
    }

    /// Adds an action to run when this composite is disposed.
    @discardableResult
    public func add(_ action: @escaping @Sendable () -> Void) -> Token? {
        add(ActionDisposable(action))
    }

    /// Removes a child without disposing it.
    public func remove(_ token: Token) {
        let removed = state.withLock { state -> Disposable? in
            guard case .active(let next, var children) = state else { return nil }
            state = .disposed
            defer { state = .active(next: next, children: children) }
            guard let index = children.index(ofID: token.id, id: { $0.id }) else { return nil }
            return children.remove(at: index).disposable
        }
        // Released outside the lock: a deinit may run.
        _ = removed
    }

    public func dispose() {
        let children = state.withLock { state -> [(id: Int, disposable: Disposable)] in
            guard case .active(_, let children) = state else { return [] }
            state = .disposed
            return children
        }
        for child in children { child.disposable.dispose() }
    }
}

/// Holds one disposable at a time; replacing it disposes the previous one.
///
/// Used where work is restarted (a retried attempt, the current inner
/// signal). Once the serial disposable is disposed, whatever is assigned
/// later is disposed at once.
public final class SerialDisposable: Disposable {
    private enum State {
        case active(Disposable?)
        case disposed
    }

    private let state: Mutex<State>

    /// A serial disposable holding `inner`.
    public init(_ inner: Disposable? = nil) {
        state = Mutex(.active(inner))
    }

    public var isDisposed: Bool {
        state.withLock { if case .disposed = $0 { return true } else { return false } }
    }

    /// The current inner disposable. Setting it disposes the old one.
    public var inner: Disposable? {
        get {
            state.withLock { if case let .active(inner) = $0 { return inner } else { return nil } }
        }
        set {
            let (old, disposeNew) = state.withLock { state -> (Disposable?, Bool) in
                guard case let .active(current) = state else { return (nil, true) }
                state = .active(newValue)
                return (current, false)
            }
            old?.dispose()
            if disposeNew { newValue?.dispose() }
        }
    }

    public func dispose() {
        let old = state.withLock { state -> Disposable? in
            guard case let .active(current) = state else { return nil }
            state = .disposed
            return current
        }
        old?.dispose()
    }
}

extension CompositeDisposable {
    /// A child composite disposed together with this one. When the child is
    /// disposed first, it removes itself, so long-lived parents do not
    /// accumulate finished children.
    func makeChild() -> CompositeDisposable {
        let child = CompositeDisposable()
        if let token = add(child) {
            child.add { [weak self] in self?.remove(token) }
        }
        return child
    }
}

extension Array {
    /// The index of the element whose id is `id`, in an array sorted by
    /// ascending ids (a binary search); nil when no element has it.
    func index(ofID id: Int, id idOf: (Element) -> Int) -> Int? {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if idOf(self[middle]) < id { low = middle + 1 } else { high = middle }
        }
        return low < count && idOf(self[low]) == id ? low : nil
    }
}
