#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The size of the terminal a file descriptor writes to.
public struct TerminalSize: Sendable, Equatable {
    public var columns: Int
    public var rows: Int

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// Used when the size cannot be asked (not a terminal, or a zero size).
    public static let fallback = TerminalSize(columns: 80, rows: 24)

    /// The size from `ioctl(TIOCGWINSZ)`, or nil when `fd` is not a terminal.
    public static func of(fd: Int32) -> TerminalSize? {
        var size = winsize()
        #if canImport(Glibc)
        let result = ioctl(fd, UInt(TIOCGWINSZ), &size)
        #else
        let result = ioctl(fd, TIOCGWINSZ, &size)
        #endif
        guard result == 0, size.ws_col > 0 else { return nil }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row > 0 ? size.ws_row : 24))
    }

    /// The size of `fd`'s terminal, else `$COLUMNS`/`$LINES`, else 80×24.
    public static func current(fd: Int32, environment: [String: String]) -> TerminalSize {
        if let size = of(fd: fd) { return size }
        let columns = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? fallback.columns
        let rows = environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? fallback.rows
        return TerminalSize(columns: columns, rows: rows)
    }
}
