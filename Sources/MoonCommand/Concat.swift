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
            let state = ConcatState()
            func startNext() {
                // Trampoline: whoever is inside the loop starts the next one.
                do {
                    state.lock.lock(); defer { state.lock.unlock() }
                    if state.looping { state.again = true; return }
                    state.looping = true
                }
                while true {
                    let index: Int = {
                        state.lock.lock(); defer { state.lock.unlock() }
                        state.again = false
                        return state.index
                    }()
                    if index == signals.count {
                        sink.send(.completed)
                    } else if !lifetime.isDisposed {
                        signals[index].start(Observer { event in
                            if case .completed = event {
                                do {
                                    state.lock.lock(); defer { state.lock.unlock() }
                                    state.index += 1
                                }
                                startNext()
                            } else {
                                sink.send(event)
                            }
                        }, in: lifetime.makeChild())
                    }
                    state.lock.lock(); defer { state.lock.unlock() }
                    if !state.again { state.looping = false; return }
                }
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
    public func then<U>(_ next: Signal<U>) -> Signal<U> {
        let ignored: Signal<U> = self.filter { _ in false }.map { _ in fatalError("unreachable") }
        return .concat([ignored, next])
    }
}

private final class ConcatState {
    let lock = Lock()
    var index = 0
    var looping = false
    var again = false
}
