#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes bytes to a file descriptor with `write(2)`, unbuffered, so nothing
/// already emitted is lost if moon is killed. A closed reader (`moon … | head
/// -1`) is reported once through `onBrokenPipe` instead of killing moon with
/// SIGPIPE (moon ignores SIGPIPE), so the run can be cancelled cleanly.
public final class OutputSink {
    public let fd: Int32
    public private(set) var isBroken = false
    public var onBrokenPipe: (() -> Void)?

    public init(fd: Int32) {
        self.fd = fd
    }

    public static let standardOutput = OutputSink(fd: 1)
    public static let standardError = OutputSink(fd: 2)

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
                isBroken = true
                onBrokenPipe?()
                return
            }
            remaining -= written
            base += written
        }
    }
}
