import Glibc

/// Runs blocking work (slow up-to-date checks, cache restores, remote-cache
/// requests) off moon's event loop on at most `width` threads at once, in
/// the order it came. Threads start when work comes and end when none is
/// left, so an idle pool costs nothing.
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

    public init(name: String, width: Int = WorkerPool.defaultWidth) {
        self.name = name
        self.width = max(1, width)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&idle, nil)
    }

    deinit {
        pthread_cond_destroy(&idle)
        pthread_mutex_destroy(&mutex)
    }

    /// Queues `work`; a new thread takes it when fewer than `width` run.
    public func run(_ work: @escaping () -> Void) {
        pthread_mutex_lock(&mutex)
        queue.append(work)
        busy += 1
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
        while head < queue.count {
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
}
