import Foundation
import Glibc
import Synchronization

/// A minimal HTTP/1.1 client over TCP sockets: persistent connections kept
/// between requests (one per thread sending at once), bodies of any size
/// streamed from a file or to the caller (`Content-Length` or chunked), and
/// every request bounded in time (`Waiter`). moon's release binary is
/// linked statically, and Foundation's URLSession needs libcurl, which the
/// static build cannot link; a Bazel remote cache needs only GET and PUT.
/// `https://` goes through OpenSSL (`TLSStream`), set up at the first
/// connection, so a run that makes none initialises no TLS.
final class HTTPClient: @unchecked Sendable {
    /// What a request sends after its head.
    enum Body {
        case none
        case bytes(Data)
        /// `size` bytes of the open file `fd`, from its start.
        case file(Int32, size: Int64)
    }

    enum Failure: Error, CustomStringConvertible {
        case unreachable(String)
        /// The server closed the connection before any byte of its answer.
        case closed(String)
        case timedOut
        case malformed
        /// A file being sent could not be read to its end.
        case localFile(String)
        /// An answer moon does not take (say, an entry too large).
        case refused(String)
        /// `shouldStop` said so: the run stopped, or the remote was turned off.
        case stopped
        /// An https connection could not be made safe: a certificate that
        /// does not verify, a failed handshake, or TLS files moon cannot use.
        case tls(String)

        var description: String {
            switch self {
            case .unreachable(let why), .closed(let why), .localFile(let why), .refused(let why), .tls(let why): return why
            case .timedOut: return "timed out"
            case .malformed: return "a malformed response"
            case .stopped: return "stopped"
            }
        }
    }

    let endpoint: Endpoint
    /// The `Authorization` header's value (`Bearer` and the token, or the
    /// URL's `Basic` user and password); never printed.
    private let authorization: String?
    private let lock = Mutex(())
    /// Connections between requests, the last returned on top.
    private var idle: [HTTPConnection] = []
    /// More than the threads that send at once: the rest are closed.
    static let maxIdle = 16
    /// Where an https endpoint's trust and identity come from.
    private let tlsFiles: TLSFiles
    /// OpenSSL's settings, made at the first https connection (or why they cannot be).
    private var tlsContext: Result<TLSContext, Failure>?

    /// A token with a control character (a line break would end the header
    /// and start another) is refused, never sent; so is a token beside the
    /// URL's user and password. `tokenName` says where the token came from.
    init(endpoint: Endpoint, token: String?, tokenName: String = "the token", tls: TLSFiles = TLSFiles()) throws(Endpoint.Invalid) {
        self.endpoint = endpoint
        tlsFiles = tls
        if let token, token.utf8.contains(where: { $0 < 32 || $0 == 127 }) {
            throw Endpoint.Invalid(description: "\(tokenName) has a line break or another control character; moon never sends it")
        }
        if token != nil && endpoint.basicAuthorization != nil {
            throw Endpoint.Invalid(description: "the URL has a user:password and \(tokenName) is set too: give one of them")
        }
        authorization = token.map { "Bearer " + $0 } ?? endpoint.basicAuthorization
    }

    /// Sends `method` for `path` (under the endpoint's path) with `body`;
    /// the body of a 2xx answer goes to `receive` (at most `limit` bytes;
    /// nil: it is dropped, as `HTTPConnection.exchange` says). `expected`:
    /// the bytes the answer should have, when known, for the request's hard time bound. Bounded in time as
    /// `Waiter` says (`timeout` in nanoseconds), and ends soon after
    /// `shouldStop` says so (`Failure.stopped`). A request that an idle
    /// connection's server closed before answering is sent again once, on a
    /// new connection.
    func request(_ method: String, _ path: String, body: Body = .none, timeout: UInt64, limit: Int64 = .max, expected: Int64? = nil,
                 shouldStop: @escaping () -> Bool = { false },
                 receive: ((UnsafeRawBufferPointer) throws -> Void)? = nil) throws -> Int {
        var moving = expected
        switch body {
        case .none: break
        case .bytes(let data): moving = (moving ?? 0) + Int64(data.count)
        case .file(_, let size): moving = (moving ?? 0) + size
        }
        let wait = Waiter(timeout: timeout, expected: moving, shouldStop: shouldStop)
        var head = "\(method) \(endpoint.path)/\(path) HTTP/1.1\r\nHost: \(endpoint.authority)\r\nConnection: keep-alive\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        switch body {
        case .none: break
        case .bytes(let data): head += "Content-Length: \(data.count)\r\nContent-Type: application/octet-stream\r\n"
        case .file(_, let size): head += "Content-Length: \(size)\r\nContent-Type: application/octet-stream\r\n"
        }
        head += "\r\n"
        var connection = try take() ?? open(wait)
        do {
            let status = try connection.exchange(head: head, body: body, method: method, wait, limit: limit, receive: receive)
            giveBack(connection)
            return status
        } catch Failure.closed where connection.served > 0 && !connection.answered {
            connection = try open(wait)
            let status = try connection.exchange(head: head, body: body, method: method, wait, limit: limit, receive: receive)
            giveBack(connection)
            return status
        }
    }

    /// Closes the idle connections (the remote is no longer used).
    func closeIdle() {
        lock.withLock { _ in idle.removeAll() }
    }

    /// An idle connection the server has not closed, if any.
    private func take() -> HTTPConnection? {
        while true {
            let connection = lock.withLock { _ in idle.popLast() }
            guard let connection else { return nil }
            if !connection.isStale { return connection }
        }
    }

    private func giveBack(_ connection: HTTPConnection) {
        guard connection.reusable else { return }
        lock.withLock { _ in if idle.count < Self.maxIdle { idle.append(connection) } }
    }

    /// A new connection, its TLS handshake done for https (within the
    /// connecting stage's bound).
    private func open(_ wait: Waiter) throws -> HTTPConnection {
        let socket = try connect(wait)
        guard endpoint.secure else { return HTTPConnection(socket: socket) }
        let connection: HTTPConnection
        do {
            connection = HTTPConnection(socket: socket, tls: try TLSStream(socket: socket, context: context(), host: endpoint.host))
        } catch {
            close(socket)
            throw error
        }
        try connection.tls?.handshake(socket: socket, wait)
        return connection
    }

    /// The TLS settings, made once, by the first connection that needs them.
    private func context() throws(Failure) -> TLSContext {
        let made = lock.withLock { _ in
            if let tlsContext { return tlsContext }
            let made: Result<TLSContext, Failure>
            do throws(Failure) { made = .success(try TLSContext(tlsFiles)) } catch { made = .failure(error) }
            tlsContext = made
            return made
        }
        return try made.get()
    }

    private func connect(_ wait: Waiter) throws -> Int32 {
        wait.begin(.connecting)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list) == 0, let first = list else {
            throw Failure.unreachable("cannot resolve \(endpoint.host)")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let info = address {
            address = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return Self.configured(fd) }
            if errno == EINPROGRESS {
                do {
                    _ = try wait.until(fd, ready: Int16(POLLOUT))
                } catch {
                    close(fd)
                    throw error
                }
                var code: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size)
                if code == 0 { return Self.configured(fd) }
                lastError = code
            } else {
                lastError = errno
            }
            close(fd)
        }
        throw Failure.unreachable("cannot connect to \(endpoint.authority) (\(String(cString: strerror(lastError))))")
    }

    /// A request's head and a small body leave at once instead of waiting
    /// for the server's acknowledgement of the previous one (Nagle).
    private static func configured(_ fd: Int32) -> Int32 {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
