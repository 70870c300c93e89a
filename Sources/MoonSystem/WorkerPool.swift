import Glibc

/// Runs blocking work (slow up-to-date checks, cache restores, remote-cache
/// requests) off moon's event loop on at most `width` threads at once, in
/// the order it came. Threads start when work comes and end when none has
/// come for `linger`, so an idle pool costs nothing, and work given piece by
/// piece (the runner's checks, as it decides node after node) is taken by
/// the thread that is there rather than by a new thread for each piece.
public final class WorkerPool: @unchecked Sendable {
    /// How many threads the pools of moon's cache use: the work waits on
    /// disks and servers more than it computes, so more than the cores.
    public static let defaultWidth = 8

    public let name: String
    public let width: Int
    private var mutex = pthread_mutex_t()
    // Guarded by `mutex`.
    private var queue: [() -> Void] = []
    private var head = 0
    private var threads = 0
    private var busy = 0
    private var idle = pthread_cond_t()
    /// Signalled when work comes while a thread waits for it.
    private var arrived = pthread_cond_t()
    private var waiting = 0

    /// How long a thread with nothing to do waits for more before it ends.
    public static let linger = 0.02

    public init(name: String, width: Int = WorkerPool.defaultWidth) {
        self.name = name
        self.width = max(1, width)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&idle, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&arrived, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&idle)
        pthread_cond_destroy(&arrived)
        pthread_mutex_destroy(&mutex)
    }

    /// Queues `work`; a new thread takes it when fewer than `width` run.
    public func run(_ work: @escaping () -> Void) {
        pthread_mutex_lock(&mutex)
        queue.append(work)
        busy += 1
        if waiting > 0 {
            pthread_cond_signal(&arrived)
            pthread_mutex_unlock(&mutex)
            return
        }
        let start = threads < width
        if start { threads += 1 }
        pthread_mutex_unlock(&mutex)
        guard start else { return }
        // No thread to be had: do it here rather than never.
        if !BackgroundThread.start(name: name, { [self] in drain() }) { drain() }
    }

    /// Waits until all work given so far is done.
    public func wait() {
        pthread_mutex_lock(&mutex)
        while busy > 0 { pthread_cond_wait(&idle, &mutex) }
        pthread_mutex_unlock(&mutex)
    }

    private func drain() {
        pthread_mutex_lock(&mutex)
        while head < queue.count || waitForWork() {
            let work = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            pthread_mutex_unlock(&mutex)
            work()
            pthread_mutex_lock(&mutex)
            busy -= 1
            if busy == 0 { pthread_cond_broadcast(&idle) }
        }
        threads -= 1
        pthread_mutex_unlock(&mutex)
    }

    /// With the mutex held: waits up to `linger` for work; whether some came.
    private func waitForWork() -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(Self.linger * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        waiting += 1
        defer { waiting -= 1 }
        while head >= queue.count {
            if pthread_cond_timedwait(&arrived, &mutex, &deadline) == ETIMEDOUT { break }
        }
        return head < queue.count
    }
}
