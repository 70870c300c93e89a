import Foundation
import MoonCommand
import MoonGraph

/// `wait-for`: polls a TCP address or a path until it is reachable or the
/// timeout expires. Polling runs on the runner's scheduler (virtual time in
/// tests); a TCP probe itself runs off it, so it never blocks the runner.
enum WaitFor {
    static let interval: Duration = .milliseconds(100)

    static func start(arguments: [String: BuiltinArgument], context: Builtin.Context, result: Builtin.Result) -> Disposable {
        let timeout = arguments["timeout"].flatMap(Builtin.duration) ?? .seconds(30)
        let deadline = context.scheduler.now.addingTimeInterval(timeout.timeInterval)
        let probe: (@escaping (Bool) -> Void) -> Void
        let what: String
        if let address = arguments["tcp"]?.text {
            what = "tcp \(address)"
            probe = { done in
                DispatchQueue.global().async {
                    let reachable = tcpReachable(address)
                    context.scheduler.schedule { done(reachable) }
                }
            }
        } else {
            let path = Builtin.resolve(arguments["path"]?.text ?? "", in: context.directory)
            what = path
            probe = { done in done(FileManager.default.fileExists(atPath: path)) }
        }
        let cancel = SerialDisposable()
        @Sendable func attempt() {
            probe { ok in
                guard !cancel.isDisposed else { return }
                if ok {
                    result.complete()
                } else if context.scheduler.now >= deadline {
                    result.fail("\(what) not reachable after \(DurationText.format(timeout))")
                } else {
                    cancel.inner = context.scheduler.schedule(after: interval) { attempt() }
                }
            }
        }
        attempt()
        return cancel
    }

    /// One connection attempt to "host:port", at most one second.
    static func tcpReachable(_ address: String) -> Bool {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            return false
        }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(list) }
        var current: UnsafeMutablePointer<addrinfo>? = first
        while let info = current {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            if fd >= 0 {
                var timeout = timeval(tv_sec: 1, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let connected = connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
                close(fd)
                if connected { return true }
            }
            current = info.pointee.ai_next
        }
        return false
    }
}
