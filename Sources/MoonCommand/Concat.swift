import Synchronization
extension Signal {
    /// Runs `signals` one after another: the next starts when the previous
    /// completes. Fails on the first error; the remaining signals never
    /// start.
    ///
    /// Signals that complete synchronously are started from a loop, not
    /// recursively, so concatenating thousands of them does not grow the
    /// stack.
    public static func concat(_ signals: [Signal<Value>]) -> Signal<Value> {
        Signal(serialized: { sink, lifetime in
            let state = Mutex(Trampoline())
            @Sendable func startNext() {
                // Whoever is inside the loop starts the next one.
                guard state.withLock({ $0.enter() }) else { return }
                repeat {
                    let index = state.withLock { $0.index }
                    if index == signals.count {
                        sink.send(.completed)
                    } else if !lifetime.isDisposed {
                        signals[index].start(Observer { event in
                            if case .completed = event {
                                state.withLock { $0.index += 1 }
                                startNext()
                            } else {
                                sink.send(event)
                            }
                        }, in: lifetime.makeChild())
                    }
                } while state.withLock({ $0.loopAgain() })
            }
            startNext()
        })
    }

    /// This signal, then `next` once this one has completed.
    public func concat(_ next: Signal<Value>) -> Signal<Value> {
        .concat([self, next])
    }

    /// Waits for this signal to complete, ignoring its values, then runs
    /// `next`. An error of this signal ends the result, and `next` never
    /// starts. This is how a command waits for its needs.
    public func then<U: Sendable>(_ next: Signal<U>) -> Signal<U> {
        let ignored: Signal<U> = self.compactMap { _ in nil }
        return .concat([ignored, next])
    }
}

/// A loop that re-entrant calls hand their work to instead of recursing:
/// the first caller loops while others ask it to go again.
struct Trampoline {
    /// The next signal to start (concat).
    var index = 0
    private var looping = false
    private var again = false

    /// True when the caller should run the loop; false when the running
    /// loop was asked to go round once more instead.
    mutating func enter() -> Bool {
        if looping {
            again = true
            return false
        }
        looping = true
        again = false
        return true
    }

    /// Whether the loop must go round again; leaves it otherwise.
    mutating func loopAgain() -> Bool {
        if again {
            again = false
            return true
        }
        looping = false
        return false
    }
}
