import Foundation
import Synchronization

extension Signal {
    /// Sends a value once the upstream has been quiet for `interval`: every
    /// value restarts the wait, so a burst of values gives one.
    ///
    /// The values of a burst are folded with `merge` (by default the latest
    /// wins); watch mode folds path sets into their union, so a `git
    /// checkout` of many files is one change. A value still waiting when the
    /// upstream completes is sent before the completion; an error is
    /// forwarded at once and drops it.
    public func debounce(_ interval: Duration, on scheduler: DateScheduler,
                         merge: @escaping @Sendable (_ waiting: Value, _ new: Value) -> Value = { $1 }) -> Signal<Value> {
        let upstream = self
        return Signal(serialized: { sink, lifetime in
            // `generation` tells a timer that fires late (its value was
            // replaced meanwhile) that it has nothing to send.
            let state = Mutex((waiting: Value?.none, generation: 0))
            let timer = SerialDisposable()
            lifetime.add(timer)

            @Sendable func fire(_ generation: Int) {
                sink.modify { enqueue in
                    let value = state.withLock { state -> Value? in
                        guard state.generation == generation else { return nil }
                        defer { state.waiting = nil }
                        return state.waiting
                    }
                    if let value { enqueue(.next(value)) }
                }
            }

            upstream.start(Observer { event in
                switch event {
                case let .next(value):
                    let generation = state.withLock { state -> Int in
                        state.waiting = state.waiting.map { merge($0, value) } ?? value
                        state.generation += 1
                        return state.generation
                    }
                    timer.inner = scheduler.schedule(after: interval) { fire(generation) }
                case .completed:
                    timer.inner = nil
                    sink.modify { enqueue in
                        if let value = state.withLock({ state -> Value? in
                            defer { state.waiting = nil }
                            return state.waiting
                        }) {
                            enqueue(.next(value))
                        }
                        enqueue(.completed)
                    }
                case .error:
                    timer.inner = nil
                    sink.send(event)
                }
            }, in: lifetime.makeChild())
        })
    }
}
