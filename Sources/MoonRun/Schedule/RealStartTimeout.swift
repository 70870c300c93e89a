import MoonCommand
import MoonEvents

extension Signal where Value == NodeOutput {
    /// The core's `timeout`, counted from the attempt's real start. While
    /// the attempt's process waits for descriptors or processes to become
    /// free (`.waiting(true)` until `.waiting(false)`) no time counts, and
    /// the limit starts over once it runs: time spent waiting for other
    /// nodes to end is not the node's own. An attempt that never waits is
    /// exactly `timeout(after:raising:on:)`.
    func timeoutFromRealStart(after limit: Duration, raising error: NodeError, on scheduler: DateScheduler) -> Signal<NodeOutput> {
        let upstream = self
        return Signal { observer, lifetime in
            // Each running stretch passes its events through the core's
            // `timeout`; a wait ends the stretch (and its deadline).
            let stretch = SerialDisposable()
            lifetime.add(stretch)
            // Set and read on the scheduler only (the run's loop).
            nonisolated(unsafe) var relay: Observer<NodeOutput>?
            @Sendable func run() {
                let events = Signal<NodeOutput> { inner, _ in relay = inner }
                stretch.inner = events.timeout(after: limit, raising: error, on: scheduler).start(observer)
            }
            run()
            lifetime.add(upstream.start { event in
                if case .next(.waiting(let waiting)) = event {
                    relay = nil
                    stretch.inner = nil
                    observer.send(event)
                    if !waiting { run() }
                } else if let relay {
                    relay.send(event)
                } else {
                    observer.send(event)
                }
            })
        }
    }
}
