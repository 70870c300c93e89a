import Dispatch
import MoonCommand
import MoonEventLoop
import Synchronization

/// The file system as a signal: the changes below a set of directories,
/// seen with inotify on moon's event loop, or by polling where inotify is
/// unavailable, its limit is reached, or polling was asked for. It never
/// stops watching silently: each way of watching it takes is announced.
public enum FileWatcher {
    /// How the watcher watches, announced when it starts and when it falls back.
    public enum Method: Sendable, Equatable {
        /// inotify, with one watch per directory.
        case inotify(directories: Int)
        /// A look every `interval` at `files` files.
        case polling(interval: Duration, files: Int)
    }

    /// The interval of polling when inotify fails and none was asked for.
    public static let fallbackInterval: Duration = .seconds(1)

    /// The changes below `roots`, each batch as it is seen (not debounced).
    ///
    /// - Parameters:
    ///   - loop: where inotify's descriptor is polled and changes are sent
    ///     from (polling looks on a queue of its own).
    ///   - poll: poll at this interval instead of using inotify.
    ///   - announce: called with each way of watching taken, and the error
    ///     that made the watcher fall back to polling; from then on no
    ///     change below `roots` is missed.
    ///   - leftover: the changes inotify had seen but not yet delivered
    ///     when the signal is disposed, read on the loop as it closes.
    public static func changes(
        of roots: [WatchRoot], loop: EventLoop, poll: Duration? = nil,
        announce: @escaping @Sendable (Method, WatchError?) -> Void,
        leftover: @escaping @Sendable (FileChanges) -> Void = { _ in }
    ) -> Signal<FileChanges> {
        Signal { observer, lifetime in
            let polling = SerialDisposable()
            lifetime.add(polling)

            @Sendable func startPolling(every interval: Duration, because error: WatchError?) {
                let queue = QueueScheduler(label: "moon.watch.poll", qos: .utility)
                queue.post {
                    let poller = PollingWatcher(roots: roots)
                    announce(.polling(interval: interval, files: poller.fileCount), error)
                    @Sendable func tick() {
                        if let changes = poller.look() { observer.send(next: changes) }
                        polling.inner = queue.schedule(after: interval, tick)
                    }
                    polling.inner = queue.schedule(after: interval, tick)
                }
            }

            if let poll {
                startPolling(every: poll, because: nil)
                return
            }
            loop.post {
                guard !lifetime.isDisposed else { return }
                let watcher: InotifyWatcher
                do {
                    watcher = try InotifyWatcher(roots: roots)
                } catch {
                    startPolling(every: fallbackInterval, because: error as? WatchError)
                    return
                }
                announce(.inotify(directories: watcher.watchCount), nil)
                let open = Mutex(true)
                let watch = EventLoop.Watch(fd: watcher.fd) { _ in
                    do {
                        if let changes = try watcher.readChanges() {
                            // Read after a dispose that has not closed it yet: still not to be lost.
                            if lifetime.isDisposed { leftover(changes) } else { observer.send(next: changes) }
                        }
                        return true
                    } catch {
                        // A new directory could not be watched: poll everything
                        // rather than miss what happens in it.
                        open.withLock { $0 = false }
                        watcher.close()
                        startPolling(every: fallbackInterval, because: error as? WatchError)
                        return false
                    }
                }
                loop.add([watch])
                lifetime.add {
                    loop.post {
                        guard open.withLock({ let was = $0; $0 = false; return was }) else { return }
                        // A watcher that replaces this one was placed before this
                        // runs; what this one saw before then would be lost with it.
                        if let changes = try? watcher.readChanges() { leftover(changes) }
                        loop.cancel(watch)
                        watcher.close()
                    }
                }
            }
        }
    }
}
