import CMoonSystem
import Foundation
import Glibc
import MoonSystem

extension EventLoop {
    /// Calls `handler` on the loop with each of `signals` (SIGINT, SIGTERM…)
    /// moon receives from now on, instead of their default action: a signal
    /// handler writes the number to a pipe the loop watches
    /// (`moon_forward_signals`), so no thread waits for signals. Throws a
    /// `POSIXError` (the errno of `pipe2` or `sigaction`).
    public func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        var fds: [Int32] = [-1, -1]
        guard LinuxCalls.pipe2(&fds, O_CLOEXEC | O_NONBLOCK) == 0 else { throw POSIXError.current }
        let readEnd = fds[0]
        add([Watch(fd: readEnd) { _ in
            var numbers = [UInt8](repeating: 0, count: 16)
            while case let count = read(readEnd, &numbers, numbers.count), count > 0 {
                for number in numbers[0..<count] { handler(Int32(number)) }
            }
            return true
        }])
        let code = signals.withUnsafeBufferPointer { moon_forward_signals(fds[1], $0.baseAddress, Int32($0.count)) }
        if code != 0 { throw POSIXErrorCode(rawValue: code).map { POSIXError($0) } ?? POSIXError(.EINVAL) }
    }
}

extension POSIXError {
    /// The error `errno` names now.
    public static var current: POSIXError {
        POSIXErrorCode(rawValue: errno).map { POSIXError($0) } ?? POSIXError(.EIO)
    }
}
