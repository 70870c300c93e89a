import Foundation

/// A TCP proxy on 127.0.0.1 in front of a server, on threads of its own,
/// that counts what it forwards and can play a faulty server:
/// - `.freeze` after `limit` bytes in `direction`: nothing more moves on any
///   connection and new ones wait unaccepted, as when the server process is
///   stopped (SIGSTOP), but with nothing to resume: `shutdown` (also at
///   deinit) closes everything;
/// - `.cut` after `limit` bytes: every connection is closed at once (a body
///   cut short);
/// - `.closeReused`: a connection that already answered is closed when the
///   next request comes, before any byte of it reaches the server (a server
///   that closed an idle connection just as a request was sent on it).
final class FaultyProxy: @unchecked Sendable {
    enum Direction { case toServer, toClient }
    enum Fault { case none, freeze, cut, closeReused }

    let port: Int
    private let upstream: Int
    private let fault: Fault
    private let direction: Direction
    private let limit: Int
    private let listener: Int32
    /// Written to (closed) by `shutdown`: every thread's poll wakes up.
    private let stopPipe: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var forwarded = 0
    private var isTripped = false
    private var isStopped = false
    private var accepted = 0
    private var threads = 0
    private let allEnded = DispatchSemaphore(value: 0)

    init(to upstream: Int, fault: Fault = .none, after limit: Int = 0, _ direction: Direction = .toClient) throws {
        self.upstream = upstream
        self.fault = fault
        self.limit = limit
        self.direction = direction
        (listener, port) = try Nginx.listeningSocket()
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CocoaError(.fileReadUnknown) }
        stopPipe = (fds[0], fds[1])
        start { [self] in acceptLoop() }
    }

    deinit { shutdown() }

    var url: String { "http://127.0.0.1:\(port)/cache" }

    /// Whether the fault happened.
    var tripped: Bool { lock.withLock { isTripped } }

    /// Connections accepted so far.
    var connections: Int { lock.withLock { accepted } }

    /// Ends every connection and thread (waits at most 10 s for them).
    func shutdown() {
        let first = lock.withLock { () -> Bool in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        close(stopPipe.write)
        _ = allEnded.wait(timeout: .now() + 10)
        close(listener)
        close(stopPipe.read)
    }

    private func start(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { threads += 1 }
        let thread = Thread { [self] in
            body()
            let last = lock.withLock { () -> Bool in
                threads -= 1
                return threads == 0
            }
            if last { allEnded.signal() }
        }
        thread.start()
    }

    /// Waits until `fd` has `events` or the proxy stops (false).
    private func wait(_ fds: [Int32], _ events: Int16) -> [Int16]? {
        var entries = fds.map { pollfd(fd: $0, events: events, revents: 0) }
        entries.append(pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0))
        while true {
            let ready = poll(&entries, nfds_t(entries.count), -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || entries.last!.revents != 0 { return nil }
            return entries.dropLast().map(\.revents)
        }
    }

    private func frozen() -> Bool {
        lock.withLock { fault == .freeze && isTripped }
    }

    private func acceptLoop() {
        while wait([listener], Int16(POLLIN)) != nil {
            // A frozen server accepts nothing: connections wait in the backlog.
            if frozen() {
                _ = wait([], 0)
                return
            }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            lock.withLock { accepted += 1 }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(upstream).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            start { [self] in
                pump(client, server)
                close(client)
                close(server)
            }
        }
    }

    /// Forwards both ways until either side closes, a fault ends it, or the proxy stops.
    private func pump(_ client: Int32, _ server: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var answered = false
        while let ready = wait([client, server], Int16(POLLIN)) {
            if frozen() {
                _ = wait([], 0)
                return
            }
            if lock.withLock({ fault == .cut && isTripped }) { return }
            for (index, events) in ready.enumerated() where events != 0 {
                let from = index == 0 ? client : server, to = index == 0 ? server : client
                let toServer = index == 0
                if toServer && fault == .closeReused && answered { return }
                let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return }
                if !toServer { answered = true }
                let counted = (direction == .toServer) == toServer
                let (pass, trips) = budget(n, counted: counted)
                guard buffer.withUnsafeBytes({ sendAll(to, $0.baseAddress!, pass) }) else { return }
                if trips {
                    if fault == .cut { return }
                    _ = wait([], 0)
                    return
                }
            }
        }
    }

    /// How many of `n` bytes may go on, and whether the fault happens after them.
    private func budget(_ n: Int, counted: Bool) -> (Int, Bool) {
        lock.withLock {
            guard counted, fault == .freeze || fault == .cut else { return (n, false) }
            if isTripped { return (0, true) }
            let pass = min(n, limit - forwarded)
            forwarded += pass
            if forwarded >= limit { isTripped = true }
            return (pass, isTripped)
        }
    }

    private func sendAll(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let n = send(fd, bytes + offset, count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
