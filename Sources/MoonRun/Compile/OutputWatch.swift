import Glibc
import MoonCommand
import Synchronization

/// Tells, when a node's process has exited, whether it created its
/// `$MOON_OUTPUT` file — without looking the file up.
///
/// Most nodes write no outputs, and each attempt's file has a new name, so
/// looking it up (`open`) would miss the kernel's caches every time: a path
/// walk and a negative directory entry per process. An inotify watch on the output
/// directory hears of every file created there instead; a node's file is
/// opened only when its creation was heard.
///
/// Why it is never wrong: the kernel queues the event inside the call that
/// creates the file, which the node makes before it exits; moon reads the
/// queue after it has seen the exit. When the queue overflowed (or inotify
/// is unavailable) the answer is "maybe", and the file is looked up as before.
final class OutputWatch {
    private let fd: Int32
    private let lock = Mutex(())
    // Guarded by `lock`.
    private var created: Set<String> = []
    private var unsure = false
    private static let bufferSize = 4096
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: OutputWatch.bufferSize,
                                                          alignment: MemoryLayout<inotify_event>.alignment)

    /// Watches `directory`; nil when inotify is not available (e.g. the
    /// per-user limit of inotify instances is reached).
    init?(directory: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            buffer.deallocate()
            return nil
        }
        guard inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            close(fd)
            buffer.deallocate()
            return nil
        }
        self.fd = fd
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// Whether a file named `name` may exist in the directory: false only
    /// when it certainly was not created since it was last asked for.
    /// (Each name is reported once: asking consumes it.)
    func mayExist(_ name: String) -> Bool {
        lock.withLock { _ in
            readEvents()
            if unsure { return true }
            return created.remove(name) != nil
        }
    }

    /// Reads every queued event (one `read` that finds none, usually).
    private func readEvents() {
        while true {
            let count = read(fd, buffer, Self.bufferSize)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { unsure = true }
                if event.len > 0 {
                    let name = (buffer + offset + header).assumingMemoryBound(to: CChar.self)
                    created.insert(String(cString: name))
                }
                offset += header + Int(event.len)
            }
        }
    }
}
