/// The gate where events enter a signal chain: it enforces the event
/// grammar and serial delivery without ever calling the observer while a
/// lock is held.
///
/// Senders enqueue under the lock. Whoever finds nobody delivering becomes
/// the drainer and delivers, one event at a time, outside the lock, until
/// the queue is empty. A sender that arrives while another thread (or a
/// re-entrant call from the observer itself) is draining just enqueues and
/// returns, so delivery is serial and never recursive, and an observer may
/// send back into its own signal without deadlocking.
///
/// In the uncontended case (one producer thread) an event costs two
/// lock/unlock pairs and no allocation. The per-event path is
/// `@inlinable` so client modules specialise it for their value type;
/// unspecialised generic code was 2.5 times slower.
///
/// Operators whose state changes together with what they emit (combine,
/// merge, flatMap...) use ``modify(_:)`` so that the state change and the
/// enqueueing happen under one lock, which keeps emitted events in the
/// order the state changed.
@usableFromInline
final class SerialSink<Value>: Disposable {
    @usableFromInline let lock = Lock()
    // Protected by `lock`.
    @usableFromInline var queue: [Event<Value>] = []
    @usableFromInline var head = 0
    @usableFromInline var draining = false
    @usableFromInline var accepting = true // false after a terminal event or disposal
    @usableFromInline var disposed = false
    // Touched only by the current drainer (exclusivity is handed over
    // through `lock`), or under `lock` when nobody drains.
    @usableFromInline var observer: Observer<Value>?
    @usableFromInline var lifetime: Disposable?

    /// - Parameters:
    ///   - observer: the downstream observer.
    ///   - lifetime: disposed after the terminal event has been delivered,
    ///     so upstream resources are released when the signal ends.
    @inlinable
    init(_ observer: Observer<Value>, lifetime: Disposable?) {
        self.observer = observer
        self.lifetime = lifetime
    }

    /// The observer senders use.
    @inlinable
    var input: Observer<Value> { Observer(self.send) }

    @usableFromInline
    var isDisposed: Bool {
        lock.lock(); defer { lock.unlock() }
        return disposed
    }

    /// Whether a terminal event was accepted or the sink was disposed.
    var isClosed: Bool {
        lock.lock(); defer { lock.unlock() }
        return !accepting
    }

    /// Enqueues `event` (if the grammar allows it) and delivers.
    @inlinable
    func send(_ event: Event<Value>) {
        lock.lock()
        guard accepting else { lock.unlock(); return }
        if event.isTerminal { accepting = false }
        if draining {
            queue.append(event)
            lock.unlock()
            return
        }
        draining = true
        lock.unlock()
        deliver(event)
        drainLoop()
    }

    /// Runs `body` under the sink's lock; the events it returns are
    /// enqueued atomically with whatever state `body` changed, then
    /// delivered after the lock is released. `body` must not call out.
    func modify<R>(_ body: (_ enqueue: (Event<Value>) -> Void) -> R) -> R {
        lock.lock()
        let result = body { event in
            guard self.accepting else { return }
            if event.isTerminal { self.accepting = false }
            self.queue.append(event)
        }
        lock.unlock()
        drain()
        return result
    }

    /// Enqueues without delivering; the caller holds another lock and must
    /// call ``drain()`` after releasing it. Used by multicasting (replay,
    /// properties) to keep every subscriber's order equal to the source's.
    func enqueue(_ event: Event<Value>) {
        lock.lock(); defer { lock.unlock() }
        guard accepting else { return }
        if event.isTerminal { accepting = false }
        queue.append(event)
    }

    /// Delivers queued events unless another thread is already doing it.
    func drain() {
        lock.lock()
        if draining || head == queue.count {
            lock.unlock()
            return
        }
        draining = true
        lock.unlock()
        drainLoop()
    }

    @inlinable
    func drainLoop() {
        while true {
            lock.lock()
            if disposed || head == queue.count {
                queue.removeAll(keepingCapacity: !disposed && queue.count <= 64)
                head = 0
                draining = false
                let release = disposed ? takeObserver() : nil
                lock.unlock()
                _ = release
                return
            }
            let event = queue[head]
            head += 1
            lock.unlock()
            deliver(event)
        }
    }

    @inlinable
    func deliver(_ event: Event<Value>) {
        observer?.send(event)
        if event.isTerminal {
            // The terminal event is delivered; release the observer and
            // tear down upstream resources.
            observer = nil
            let lifetime = self.lifetime
            self.lifetime = nil
            dispose()
            lifetime?.dispose()
        }
    }

    @usableFromInline
    func takeObserver() -> (Observer<Value>?, Disposable?) {
        let taken = (observer, lifetime)
        observer = nil
        lifetime = nil
        return taken
    }

    @usableFromInline
    func dispose() {
        let release: (Observer<Value>?, Disposable?)?
        do {
            lock.lock(); defer { lock.unlock() }
            if disposed { return }
            disposed = true
            accepting = false
            queue.removeAll()
            head = 0
            // The drainer releases the observer itself when it notices.
            release = draining ? nil : takeObserver()
        }
        // Released outside the lock: deinits may run. The lifetime is not
        // disposed here: disposal comes from it (or from a terminal event).
        _ = release
    }
}
