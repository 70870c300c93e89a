import Foundation
import Glibc

/// One TCP connection to the server, kept open between requests (HTTP/1.1
/// persistent connections): it sends a request's head and body and reads
/// the answer's head, then streams the answer's body to the caller, so
/// neither side of a blob is ever whole in memory. Used by one thread at a
/// time (`HTTPClient` lends it out). Over `https://`, its bytes go through
/// `tls`; the waits and bounds are the same.
final class HTTPConnection {
    let socket: Int32
    let tls: TLSStream?
    /// Answers read to their end on it: a failure on a connection that
    /// served before may only mean the server closed it while it was idle.
    private(set) var served = 0
    /// Whether a byte of the current request's answer came.
    private(set) var answered = false
    /// Whether the last answer left the connection ready for another request.
    private(set) var reusable = false
    /// Bytes received and not yet used: `buffer[start..<end]`.
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    static let bufferSize = 64 * 1024

    init(socket: Int32, tls: TLSStream? = nil) {
        self.socket = socket
        self.tls = tls
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        close(socket)
        buffer.deallocate()
    }

    /// Whether the server closed the idle connection (or sent something
    /// unasked): it must not carry another request.
    var isStale: Bool {
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) != 0 else { return false }
        return tls?.isStale ?? true
    }

    /// What the head of an answer says.
    struct Head {
        var status: Int
        var length: Int64?
        var chunked = false
        var keepAlive = true
    }

    /// The most bytes of an answer's body moon reads and drops (an error
    /// page, a PUT's answer): past it the connection is closed instead, so a
    /// server sending without end costs nothing.
    static let maxDropped: Int64 = 64 * 1024

    /// Sends one request and reads its answer; the body of a 2xx answer
    /// goes to `receive` block by block (at most `limit` bytes: a longer one,
    /// or one whose `Content-Length` says so, is refused before it is read),
    /// any other, or any when `receive` is nil, is read and dropped up to
    /// `maxDropped` bytes, then the connection is given up. The status.
    func exchange(head: String, body: HTTPClient.Body, method: String, _ wait: HTTPClient.Waiter, limit: Int64 = .max,
                  receive: ((UnsafeRawBufferPointer) throws -> Void)?) throws -> Int {
        answered = false
        reusable = false
        wait.begin(.sending)
        try Array(head.utf8).withUnsafeBytes { try send($0, wait) }
        switch body {
        case .none: break
        case .bytes(let data): try data.withUnsafeBytes { try send($0, wait) }
        case .file(let file, let size): try sendFile(file, size: size, wait)
        }
        wait.begin(.awaitingHead)
        var answer = try readHead(wait)
        while (100..<200).contains(answer.status) { answer = try readHead(wait) }
        let keep = (200..<300).contains(answer.status) ? receive : nil
        let cap = keep == nil ? Self.maxDropped : limit
        if let length = answer.length, length > cap {
            served += 1
            if keep != nil { throw HTTPClient.Failure.refused("its answer of \(length) bytes is longer than the \(limit) bytes expected") }
            return answer.status
        }
        wait.begin(.receivingBody)
        var received: Int64 = 0
        let delimited: Bool
        do {
            delimited = try readBody(answer, method: method, wait) { chunk in
                received += Int64(chunk.count)
                guard received <= cap else { throw Overlong() }
                try keep?(chunk)
            }
        } catch is Overlong {
            served += 1
            if keep != nil { throw HTTPClient.Failure.refused("its answer is longer than the \(limit) bytes expected") }
            return answer.status
        }
        served += 1
        // Bytes past the answer's end belong to no request: a server that sends them is not trusted again.
        reusable = delimited && answer.keepAlive && start == end
        return answer.status
    }

    /// A body went past its cap: the connection is not read further.
    private struct Overlong: Error {}

    // MARK: Sending

    private func send(_ bytes: UnsafeRawBufferPointer, _ wait: HTTPClient.Waiter) throws {
        var offset = 0
        while offset < bytes.count {
            guard let tls else {
                let n = Glibc.send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    offset += n
                    try wait.progressed(n)
                    continue
                }
                try waitToSend(wait)
                continue
            }
            switch tls.send(bytes.baseAddress! + offset, bytes.count - offset) {
            case .moved(let n):
                offset += n
                try wait.progressed(n)
            case .wait(let events): _ = try wait.until(socket, ready: events)
            case .ended: throw HTTPClient.Failure.closed("the connection closed")
            case .failed(let why): throw HTTPClient.Failure.closed("the connection closed (\(why))")
            }
        }
    }

    /// Sends `size` bytes of the open file `file` from its start (the
    /// kernel copies them: no buffer in moon; over TLS, which the kernel
    /// does not encrypt here, through a buffer). `sendfile` has no
    /// MSG_NOSIGNAL: moon ignores SIGPIPE from its start
    /// (`Console.takeOverSignals`), so a closed connection is EPIPE.
    private func sendFile(_ file: Int32, size: Int64, _ wait: HTTPClient.Waiter) throws {
        let size = off_t(size)
        if tls != nil { return try copyFile(file, from: 0, size: size, wait) }
        var offset = off_t(0)
        while offset < size {
            let n = sendfile(socket, file, &offset, Int(min(size - offset, 1 << 30)))
            if n > 0 {
                try wait.progressed(n)
                continue
            }
            if n == 0 { throw HTTPClient.Failure.localFile("the file ended after \(offset) of \(size) bytes") }
            if errno == EINVAL || errno == ENOSYS { return try copyFile(file, from: offset, size: size, wait) }
            try waitToSend(wait)
        }
    }

    /// `sendFile` where the kernel cannot: through a buffer, one block at a time.
    private func copyFile(_ file: Int32, from first: off_t, size: off_t, _ wait: HTTPClient.Waiter) throws {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { block.deallocate() }
        var offset = first
        while offset < size {
            let n = pread(file, block.baseAddress, min(block.count, size - offset), offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw HTTPClient.Failure.localFile("the file ended after \(offset) of \(size) bytes") }
            try send(UnsafeRawBufferPointer(rebasing: block[0..<n]), wait)
            offset += off_t(n)
        }
    }

    /// After a send that moved nothing: waits until the socket takes more,
    /// or throws what went wrong.
    private func waitToSend(_ wait: HTTPClient.Waiter) throws {
        let code = errno
        if code == EAGAIN || code == EINTR {
            _ = try wait.until(socket, ready: Int16(POLLOUT))
            return
        }
        // The server closed or reset the connection before reading the request.
        throw HTTPClient.Failure.closed("the connection closed (\(String(cString: strerror(code))))")
    }

    // MARK: Receiving

    /// Receives more bytes after `end` (moving what is unused to the front
    /// first); false at the end of the stream.
    private func fill(_ wait: HTTPClient.Waiter) throws -> Bool {
        if start == end {
            start = 0
            end = 0
        } else if end == buffer.count {
            guard start > 0 else { throw HTTPClient.Failure.malformed }
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
        }
        while true {
            switch receive(buffer.baseAddress! + end, buffer.count - end) {
            case .moved(let n):
                end += n
                answered = true
                try wait.progressed(n)
                return true
            case .ended: return false
            case .wait(let events): _ = try wait.until(socket, ready: events)
            case .failed(let why):
                if !answered { throw HTTPClient.Failure.closed("the connection closed (\(why))") }
                throw HTTPClient.Failure.unreachable("the connection failed (\(why))")
            }
        }
    }

    /// One read from the socket, or through `tls`.
    private func receive(_ bytes: UnsafeMutableRawPointer, _ count: Int) -> TLSStream.Step {
        if let tls { return tls.receive(bytes, count) }
        let n = recv(socket, bytes, count, 0)
        if n > 0 { return .moved(n) }
        if n == 0 { return .ended }
        let code = errno
        if code == EAGAIN || code == EINTR { return .wait(Int16(POLLIN)) }
        return .failed(String(cString: strerror(code)))
    }

    /// One line ending in CRLF, without it.
    private func readLine(_ wait: HTTPClient.Waiter) throws -> String {
        var scanned = start
        while true {
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[scanned..<end])
            if let lf = bytes.firstIndex(of: 10) {
                let lineEnd = scanned + lf
                var textEnd = lineEnd
                if textEnd > start && buffer[textEnd - 1] == 13 { textEnd -= 1 }
                let line = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[start..<textEnd]), as: UTF8.self)
                start = lineEnd + 1
                return line
            }
            let consumed = end - start
            guard try fill(wait) else {
                if !answered { throw HTTPClient.Failure.closed("the server closed the connection") }
                throw HTTPClient.Failure.unreachable("the connection closed in the middle of an answer")
            }
            scanned = start + consumed
        }
    }

    private func readHead(_ wait: HTTPClient.Waiter) throws -> Head {
        let statusLine = try readLine(wait)
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, statusLine.hasPrefix("HTTP/1."), let status = Int(parts[1]) else { throw HTTPClient.Failure.malformed }
        var head = Head(status: status, keepAlive: !statusLine.hasPrefix("HTTP/1.0"))
        while true {
            let line = try readLine(wait)
            if line.isEmpty { return head }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "content-length":
                guard let length = Int64(value), length >= 0 else { throw HTTPClient.Failure.malformed }
                head.length = length
            case "transfer-encoding": head.chunked = value.contains("chunked")
            case "connection":
                if value.contains("close") { head.keepAlive = false }
                if value.contains("keep-alive") { head.keepAlive = true }
            default: break
            }
        }
    }

    /// Reads the body `head` announces into `sink`; whether its end was
    /// marked (a body that ends with the connection leaves nothing to reuse).
    private func readBody(_ head: Head, method: String, _ wait: HTTPClient.Waiter,
                          _ sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if method == "HEAD" || head.status == 204 || head.status == 304 { return true }
        if head.chunked {
            while true {
                let sizeLine = try readLine(wait)
                guard let size = Int64(sizeLine.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16),
                      size >= 0 else { throw HTTPClient.Failure.malformed }
                if size == 0 {
                    while try !readLine(wait).isEmpty {}
                    return true
                }
                try pass(size, wait, sink)
                guard try readLine(wait).isEmpty else { throw HTTPClient.Failure.malformed }
            }
        }
        if let length = head.length {
            try pass(length, wait, sink)
            return true
        }
        while true {
            if start < end {
                try sink(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                start = end
            }
            guard try fill(wait) else { return false }
        }
    }

    /// Passes exactly `count` bytes of the stream to `sink`.
    private func pass(_ count: Int64, _ wait: HTTPClient.Waiter, _ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var left = count
        while left > 0 {
            if start == end {
                guard try fill(wait) else {
                    throw HTTPClient.Failure.unreachable("the connection closed after \(count - left) of \(count) bytes")
                }
            }
            let n = Int(min(Int64(end - start), left))
            try sink(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)]))
            start += n
            left -= Int64(n)
        }
    }
}
