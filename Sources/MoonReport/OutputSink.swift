import Foundation
import MoonCommand
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes bytes to a file descriptor with `write(2)`, unbuffered, so nothing
/// already emitted is lost if moon is killed. A closed reader (`moon … | head
/// -1`) is reported once through `onBrokenPipe` instead of killing moon with
/// SIGPIPE (moon ignores SIGPIPE), so the run can be cancelled cleanly. Any
/// other failed write (a full disk, an I/O error, a file-size limit) only
/// loses the text: the work goes on, and `failure` says so at the end.
public final class OutputSink {
    public let fd: Int32
    /// A write failed: later text is dropped (a file with holes in it would mislead more than a short one).
    public private(set) var isBroken = false
    /// The `errno` of the write that failed (`EPIPE`: the reader went away), 0 before.
    public private(set) var failure: Int32 = 0
    public var onBrokenPipe: (() -> Void)?

    public init(fd: Int32) {
        self.fd = fd
    }

    public static let standardOutput = OutputSink(fd: 1)
    public static let standardError = OutputSink(fd: 2)

    /// Notices a reader that goes away while moon has nothing to write (a
    /// `moon run --json | head -1` whose nodes are silent): when `fd` is a
    /// pipe or socket, a thread waits in `poll(2)` for its error/hang-up
    /// condition and then marks the sink broken and calls `onBrokenPipe` on
    /// `scheduler` — the context that also writes, so the two never race.
    public func notifyWhenReaderCloses(on scheduler: Scheduler) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let type = info.st_mode & S_IFMT
        guard type == S_IFIFO || type == S_IFSOCK else { return }
        let fd = self.fd
        // The thread keeps the sink alive while it waits (sinks live as long as moon).
        let thread = Thread { [weak self] in
            let sink = self
            var watched = pollfd(fd: fd, events: 0, revents: 0)
            while true {
                if poll(&watched, 1, -1) < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if watched.revents & Int16(POLLNVAL) != 0 { return }
                if watched.revents & Int16(POLLERR | POLLHUP) != 0 { break }
            }
            scheduler.schedule { sink?.markBroken() }
        }
        thread.name = "moon.stdout-watch"
        thread.start()
    }

    private func markBroken() {
        guard !isBroken else { return }
        isBroken = true
        onBrokenPipe?()
    }

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard !isBroken, var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Glibc.write(fd, base, remaining)
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                failure = errno
                if failure == EPIPE { markBroken() } else { isBroken = true }
                return
            }
            remaining -= written
            base += written
        }
    }
}
