import Synchronization
/// How `flatMap(_:_:)` combines the inner signals.
public enum FlattenStrategy: Sendable, Equatable {
    /// Every inner signal runs to its end, all at once.
    case merge
    /// One inner signal at a time, in order.
    case concat
    /// Only the newest inner signal runs: a new value disposes the one
    /// before (switch-to-latest; `flatMapLatest` in ReactiveSwift).
    case latest
}

extension Signal {
    /// Maps each value to a signal and flattens them by `strategy`.
    ///
    /// With `.latest`, a new value cancels the inner signal still running
    /// (disposing its subscription, so its work stops) and starts the new
    /// one: watch mode's "cancel the stale run and start again". It
    /// completes when the outer signal and the current inner one have
    /// completed, and fails on the first error of either.
    public func flatMap<U: Sendable>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> Signal<U>) -> Signal<U> {
        switch strategy {
        case .merge: return flatMap(maxConcurrent: .max, transform)
        case .concat: return flatMap(maxConcurrent: 1, transform)
        case .latest: return switchMap(transform)
        }
    }

    /// `flatMap(.latest, transform)`.
    private func switchMap<U: Sendable>(_ transform: @escaping @Sendable (Value) -> Signal<U>) -> Signal<U> {
        let upstream = self
        return Signal<U>(serialized: { sink, lifetime in
            // `generation` names the current inner signal: events of one it
            // replaced are dropped even if they were already on their way.
            let state = Mutex((generation: 0, innerActive: false, outerCompleted: false))
            let current = SerialDisposable()
            lifetime.add(current)

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let generation = state.withLock { state -> Int in
                        state.generation += 1
                        state.innerActive = true
                        return state.generation
                    }
                    // The old inner signal is disposed before the new one starts:
                    // its processes get their stop before new ones are spawned.
                    current.inner = nil
                    let inner = transform(value)
                    let child = CompositeDisposable()
                    current.inner = child
                    inner.start(Observer { innerEvent in
                        sink.modify { enqueue in
                            let forward = state.withLock { state -> Bool in
                                guard state.generation == generation else { return false }
                                if case .completed = innerEvent {
                                    state.innerActive = false
                                    if state.outerCompleted { enqueue(.completed) }
                                    return false
                                }
                                return true
                            }
                            if forward { enqueue(innerEvent) }
                        }
                    }, in: child)
                case let .error(error):
                    sink.send(.error(error))
                case .completed:
                    sink.modify { enqueue in
                        let done = state.withLock { state -> Bool in
                            state.outerCompleted = true
                            return !state.innerActive
                        }
                        if done { enqueue(.completed) }
                    }
                }
            }, in: lifetime.makeChild())
        })
    }
}
