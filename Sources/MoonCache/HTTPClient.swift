import Foundation
import Glibc

/// A minimal HTTP/1.1 client over a TCP socket: one request per
/// connection, `Content-Length` or chunked bodies, and a deadline on every
/// step (connect, send, receive). moon's release binary is linked
/// statically, and Foundation's URLSession needs libcurl, which has no
/// static build here; a Bazel remote cache needs only GET and PUT.
/// Plain `http://` only: put a TLS-terminating proxy in front of an
/// `https://` server.
struct HTTPClient: Sendable {
    struct Endpoint: Sendable {
        var host: String
        var port: UInt16
        /// The base path, without a trailing slash ("" or "/cache").
        var path: String

        init?(_ url: String) {
            guard url.hasPrefix("http://") else { return nil }
            var rest = Substring(url.dropFirst("http://".count))
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let authority = rest[..<slash]
            rest = rest[slash...]
            while rest.hasSuffix("/") { rest = rest.dropLast() }
            guard !authority.isEmpty, !authority.contains("@") else { return nil }
            if let colon = authority.lastIndex(of: ":"), !authority.hasPrefix("[") {
                guard let port = UInt16(authority[authority.index(after: colon)...]) else { return nil }
                host = String(authority[..<colon])
                self.port = port
            } else {
                host = String(authority)
                port = 80
            }
            path = String(rest)
        }
    }

    struct Response {
        var status: Int
        var body: Data
    }

    enum Failure: Error, CustomStringConvertible {
        case unreachable(String)
        case timedOut
        case malformed
        /// `shouldStop` said so: the run stopped, or the remote was turned off.
        case stopped

        var description: String {
            switch self {
            case .unreachable(let why): return why
            case .timedOut: return "timed out"
            case .malformed: return "a malformed response"
            case .stopped: return "stopped"
            }
        }
    }

    let endpoint: Endpoint
    /// Sent as `Authorization: Bearer …`; never printed.
    let token: String?

    /// Sends `method` for `path` (under the endpoint's path) with `body`,
    /// all of it within `deadline` (CLOCK_MONOTONIC nanoseconds); gives up
    /// (`Failure.stopped`) soon after `shouldStop` says so.
    func request(_ method: String, _ path: String, body: Data? = nil, deadline: UInt64,
                 shouldStop: @escaping () -> Bool = { false }) throws -> Response {
        let wait = Waiter(deadline: deadline, shouldStop: shouldStop)
        let socket = try connect(wait)
        defer { close(socket) }
        var head = "\(method) \(endpoint.path)/\(path) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\nContent-Type: application/octet-stream\r\n" }
        head += "\r\n"
        try send(Data(head.utf8), on: socket, wait)
        if let body { try send(body, on: socket, wait) }
        return try Self.parse(try receiveAll(socket, wait))
    }

    private func connect(_ wait: Waiter) throws -> Int32 {
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
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            if errno == EINPROGRESS {
                if try wait.until(fd, ready: Int16(POLLOUT)) {
                    var code: Int32 = 0
                    var size = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size)
                    if code == 0 { return fd }
                    lastError = code
                }
            } else {
                lastError = errno
            }
            close(fd)
        }
        throw Failure.unreachable("cannot connect to \(endpoint.host):\(endpoint.port) (\(String(cString: strerror(lastError))))")
    }

    /// Waits for a socket until the request's deadline, looking at
    /// `shouldStop` at least every 50 ms.
    struct Waiter {
        let deadline: UInt64
        let shouldStop: () -> Bool

        /// Waits until `fd` is ready for `events`; throws at the deadline or a stop.
        func until(_ fd: Int32, ready events: Int16) throws -> Bool {
            while true {
                if shouldStop() { throw Failure.stopped }
                let now = HTTPClient.now()
                guard now < deadline else { throw Failure.timedOut }
                var entry = pollfd(fd: fd, events: events, revents: 0)
                let milliseconds = Int32(min(50, (deadline - now) / 1_000_000 + 1))
                let ready = poll(&entry, 1, milliseconds)
                if ready > 0 { return true }
                if ready < 0 && errno != EINTR { throw Failure.unreachable(String(cString: strerror(errno))) }
            }
        }
    }

    private func send(_ data: Data, on fd: Int32, _ wait: Waiter) throws {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n > 0 { offset += n; continue }
                if n < 0 && (errno == EAGAIN || errno == EINTR) {
                    _ = try wait.until(fd, ready: Int16(POLLOUT))
                    continue
                }
                throw Failure.unreachable("the connection closed (\(String(cString: strerror(errno))))")
            }
        }
    }

    private func receiveAll(_ fd: Int32, _ wait: Waiter) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 { return data }
            if errno == EAGAIN || errno == EINTR {
                _ = try wait.until(fd, ready: Int16(POLLIN))
                continue
            }
            throw Failure.unreachable("the connection failed (\(String(cString: strerror(errno))))")
        }
    }

    /// The status and body of a whole response.
    static func parse(_ data: Data) throws -> Response {
        let bytes = [UInt8](data)
        guard let end = find([13, 10, 13, 10], in: bytes, from: 0) else { throw Failure.malformed }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, head[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { throw Failure.malformed }
        var length: Int?
        var chunked = false
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "content-length" { length = Int(value) }
            if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
        }
        var body = Array(bytes[(end + 4)...])
        if chunked {
            body = try dechunk(body)
        } else if let length {
            guard body.count >= length else { throw Failure.malformed }
            body = Array(body[0..<length])
        }
        return Response(status: status, body: Data(body))
    }

    private static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: i) else { throw Failure.malformed }
            let sizeText = String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw Failure.malformed }
            i = lineEnd + 2
            if size == 0 { return out }
            guard i + size <= bytes.count else { throw Failure.malformed }
            out += bytes[i..<(i + size)]
            i += size + 2
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0] && Array(bytes[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
