import Foundation

/// A stand-in for a remote cache on 127.0.0.1 (or ::1), on threads of its
/// own, that records every request's head and answers as told: a store
/// that has nothing (`GET` 404, `PUT` 201), one status for everything, or
/// a server that sends the start of an answer at once and then trickles the
/// rest, one byte per `every` seconds, for as long as moon listens.
/// `stop()` ends it (its threads hold it until then).
final class RemoteCacheServer: @unchecked Sendable {
    enum Answer {
        case empty
        case status(Int)
        /// `head` at once, then `slow` (repeated without end) byte by byte.
        case trickle(head: String, slow: String, every: TimeInterval)
        /// `head`, then `body` again and again as fast as moon reads, until it
        /// closes the connection (a hostile server's answer without end).
        case flood(head: String, body: String)
        /// One answer to `GET`, another to `PUT`.
        indirect case byMethod(get: Answer, put: Answer)
    }

    let port: Int
    let ipv6: Bool
    private let answer: Answer
    private let listener: Int32
    private let lock = NSLock()
    private var heads: [String] = []
    private var stopped = false

    init(_ answer: Answer = .empty, ipv6: Bool = false) throws {
        self.answer = answer
        self.ipv6 = ipv6
        (listener, port) = try Self.listen(ipv6: ipv6)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Accepts no more connections; a trickle ends within `every`.
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// `http://127.0.0.1:PORT/cache` (or `http://[::1]:PORT/cache`).
    var url: String { ipv6 ? "http://[::1]:\(port)/cache" : "http://127.0.0.1:\(port)/cache" }

    /// The heads of the requests received so far, in order.
    var requests: [String] { lock.withLock { heads } }

    /// The request lines (`GET /cache/ac/… HTTP/1.1`) received so far.
    var requestLines: [String] { requests.map { String($0.split(separator: "\r\n").first ?? "") } }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in
                serve(connection)
                close(connection)
            }
        }
    }

    private func serve(_ connection: Int32) {
        while !isStopped, let head = Self.readRequest(connection) {
            lock.withLock { heads.append(head) }
            guard answer(head, answer, on: connection) else { return }
        }
    }

    /// Answers one request; false: the connection is done.
    private func answer(_ head: String, _ answer: Answer, on connection: Int32) -> Bool {
            switch answer {
            case .empty:
                let status = head.hasPrefix("PUT ") ? "201 Created" : "404 Not Found"
                return Self.send(connection, "HTTP/1.1 \(status)\r\nContent-Length: 0\r\n\r\n")
            case .status(let code):
                return Self.send(connection, "HTTP/1.1 \(code) Whatever\r\nContent-Length: 0\r\n\r\n")
            case .trickle(let start, let slow, let every):
                guard Self.send(connection, start) else { return false }
                let bytes = Array(slow.utf8)
                var index = 0
                while !isStopped {
                    Thread.sleep(forTimeInterval: every)
                    guard Self.send(connection, String(decoding: [bytes[index % bytes.count]], as: UTF8.self)) else { return false }
                    index += 1
                }
                return false
            case .flood(let start, let body):
                guard Self.send(connection, start) else { return false }
                while !isStopped, Self.send(connection, body) {}
                return false
            case .byMethod(let get, let put):
                return self.answer(head, head.hasPrefix("PUT ") ? put : get, on: connection)
            }
    }

    /// A request's head, its body (by `Content-Length`) read and dropped;
    /// nil when the client closed the connection.
    private static func readRequest(_ connection: Int32) -> String? {
        var seen: [UInt8] = []
        var byte: UInt8 = 0
        while !seen.suffix(4).elementsEqual("\r\n\r\n".utf8) {
            guard recv(connection, &byte, 1, 0) == 1 else { return nil }
            seen.append(byte)
        }
        let head = String(decoding: seen, as: UTF8.self)
        if let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
           let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var left = count
            while left > 0 {
                let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, min(left, $0.count), 0) }
                guard n > 0 else { return nil }
                left -= n
            }
        }
        return head
    }

    private static func send(_ connection: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// A socket listening on the loopback address at a free port.
    private static func listen(ipv6: Bool) throws -> (Int32, Int) {
        guard ipv6 else { return try Nginx.listeningSocket() }
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, Glibc.listen(fd, 64) == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown)
        }
        return (fd, Int(UInt16(bigEndian: address.sin6_port)))
    }
}
