import Foundation
import Glibc
import Testing
@testable import MoonCache

/// The HTTP client against a server that answers from a script, byte for
/// byte: the framings nginx never sends in the end-to-end tests (chunked
/// bodies, interim `100 Continue`, HTTP/1.0, a body ended by the close).
@Suite struct HTTPClientTests {
    @Test func aChunkedBodyIsJoinedAndItsConnectionKept() throws {
        let server = try ScriptedServer(answers: [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
        ])
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        var first = Data()
        #expect(try client.request("GET", "cas/one", timeout: Self.timeout, receive: { first.append(contentsOf: $0) }) == 200)
        #expect(String(decoding: first, as: UTF8.self) == "hello, world")
        var second = Data()
        #expect(try client.request("GET", "cas/two", timeout: Self.timeout, receive: { second.append(contentsOf: $0) }) == 200)
        #expect(String(decoding: second, as: UTF8.self) == "abc")
        #expect(server.connections == 1)
    }

    @Test func anInterimContinueIsSkipped() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"])
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        #expect(try client.request("PUT", "cas/one", body: .bytes(Data("x".utf8)), timeout: Self.timeout) == 201)
    }

    @Test func aBodyEndedByTheCloseIsReadAndItsConnectionNotKept() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.0 200 OK\r\n\r\nuntil the end", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"],
                                        closeAfterEach: true)
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        var body = Data()
        #expect(try client.request("GET", "ac/one", timeout: Self.timeout, receive: { body.append(contentsOf: $0) }) == 200)
        #expect(String(decoding: body, as: UTF8.self) == "until the end")
        #expect(try client.request("GET", "ac/two", timeout: Self.timeout) == 404)
        #expect(server.connections == 2)
    }

    @Test func aChunkSizeThatIsNoNumberIsMalformed() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"])
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        #expect(throws: HTTPClient.Failure.self) { try client.request("GET", "cas/one", timeout: Self.timeout) }
    }

    /// A body that moves at a sane rate finishes, though the whole of it
    /// takes longer than the timeout.
    @Test func aSteadyBodyLongerThanTheTimeoutFinishes() throws {
        let body = String(repeating: "x", count: 320 * 1024)
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body],
                                        pace: (bytes: 8 * 1024, every: 0.1))
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        var received = 0
        #expect(try client.request("GET", "cas/big", timeout: 3_000_000_000, receive: { received += $0.count }) == 200)
        #expect(received == body.utf8.count)
    }

    /// A body that keeps moving, a byte at a time, far below any sane rate:
    /// a timeout, not a wait for all of it.
    @Test func aTrickledBodyTimesOut() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n" + String(repeating: "x", count: 200)],
                                        pace: (bytes: 1, every: 0.05))
        try Self.expectTimeout(server, "cas/slow")
    }

    /// A body that keeps coming fast enough to earn its time, past what the
    /// request expects: the request's hard bound (four timeouts plus the
    /// expected bytes' time) ends it, however much it earned.
    @Test func aBodyThatKeepsEarningTimeIsStillBounded() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n" + String(repeating: "x", count: 8 << 20)],
                                        pace: (bytes: 16 * 1024, every: 0.2))
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        let start = Date()
        #expect {
            try client.request("GET", "cas/endless", timeout: 500_000_000, expected: 0, receive: { _ in })
        } throws: { error in
            if case HTTPClient.Failure.timedOut = error { return true }
            return false
        }
        #expect(Date().timeIntervalSince(start) < 15)
    }

    /// A dropped body (an error page) is read only up to its cap: a 404
    /// announcing a huge body is a miss at once, its connection not kept.
    @Test func aDroppedBodyIsCappedAndItsConnectionNotKept() throws {
        let body = String(repeating: "x", count: 1 << 20)
        let server = try ScriptedServer(answers: ["HTTP/1.1 404 Not Found\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body,
                                                  "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"])
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        #expect(try client.request("GET", "ac/one", timeout: Self.timeout) == 404)
        #expect(try client.request("GET", "ac/two", timeout: Self.timeout) == 404)
        #expect(server.connections == 2)
    }

    /// A head trickled a byte at a time must still all come within the timeout.
    @Test func aTrickledHeadTimesOut() throws {
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nX-Slow: " + String(repeating: "y", count: 150) + "\r\nContent-Length: 0\r\n\r\n"],
                                        pace: (bytes: 1, every: 0.05))
        try Self.expectTimeout(server, "ac/slow")
    }

    /// A GET of `path` with a timeout of 0.5 s ends with `timedOut`.
    static func expectTimeout(_ server: ScriptedServer, _ path: String) throws {
        let client = try HTTPClient(endpoint: server.endpoint, token: nil)
        #expect {
            try client.request("GET", path, timeout: 500_000_000)
        } throws: { error in
            if case HTTPClient.Failure.timedOut = error { return true }
            return false
        }
    }

    /// Generous: the server is a thread of this process, and a loaded host
    /// may leave it unscheduled for a while.
    static let timeout: UInt64 = 30_000_000_000
}

/// A server on 127.0.0.1 that reads each request's head and answers with
/// the next text of its script, on one thread of the test; with `pace`,
/// `bytes` at a time every `every` seconds.
final class ScriptedServer: @unchecked Sendable {
    let endpoint: HTTPClient.Endpoint
    private let listener: Int32
    private let lock = NSLock()
    private var accepted = 0

    var connections: Int {
        lock.lock()
        defer { lock.unlock() }
        return accepted
    }

    init(answers: [String], closeAfterEach: Bool = false, pace: (bytes: Int, every: TimeInterval)? = nil) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, let endpoint = HTTPClient.Endpoint("http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))") else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.listener = listener
        self.endpoint = endpoint
        Thread.detachNewThread { [self] in
            var script = answers[...]
            while !script.isEmpty {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                lock.lock()
                accepted += 1
                lock.unlock()
                while let answer = script.first, Self.readHead(connection) {
                    script = script.dropFirst()
                    Self.send(Array(answer.utf8), to: connection, pace: pace)
                    if closeAfterEach { break }
                }
                close(connection)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func send(_ bytes: [UInt8], to connection: Int32, pace: (bytes: Int, every: TimeInterval)?) {
        guard let pace else {
            _ = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return
        }
        var offset = 0
        while offset < bytes.count {
            let piece = Array(bytes[offset..<min(bytes.count, offset + pace.bytes)])
            guard piece.withUnsafeBytes({ Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == piece.count else { return }
            offset += piece.count
            Thread.sleep(forTimeInterval: pace.every)
        }
    }

    /// Reads up to the end of a request's head (and the few bytes of a body
    /// sent with it); false when the client closed the connection.
    private static func readHead(_ connection: Int32) -> Bool {
        var seen: [UInt8] = []
        var byte: UInt8 = 0
        while !seen.suffix(4).elementsEqual("\r\n\r\n".utf8) {
            guard recv(connection, &byte, 1, 0) == 1 else { return false }
            seen.append(byte)
        }
        if let line = String(decoding: seen, as: UTF8.self).split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
           let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) {
            for _ in 0..<count where recv(connection, &byte, 1, 0) == 1 {}
        }
        return true
    }
}
