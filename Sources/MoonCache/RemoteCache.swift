import Crypto
import Foundation
import Glibc
import Synchronization

/// A Bazel HTTP remote cache: `GET`/`PUT` of `URL/ac/<key>` (an entry) and
/// `URL/cas/<sha256>` (a blob), as bazel-remote or an nginx with WebDAV
/// `PUT` serve them. Every request is bounded in time (`HTTPClient.Waiter`:
/// each stage within the timeout, a body at a minimum average rate); the first failure (unreachable, timed out, a 5xx, a refused
/// upload, a body cut short) turns the remote off for the rest of the run
/// with one warning, and ends the requests still in flight, so a broken
/// server costs at most one timeout per run however many requests wait on
/// it at once. A 404 is a miss. Blobs stream between the server and files
/// of the local cache, never whole in memory. Thread-safe: callers send
/// requests from several threads at once.
public final class RemoteCache: @unchecked Sendable {
    let client: HTTPClient
    /// The URL as given, its password replaced by `***` (the token and the
    /// password are sent only as a header, never printed).
    public let url: String
    public let readOnly: Bool
    let timeoutNanoseconds: UInt64
    private let lock = Mutex(())
    private var off = false
    /// The run stopped: requests end without a warning.
    private var canceled = false
    private let onWarning: (String) -> Void
    /// An entry larger than this is refused (a miss and a warning): it is
    /// read into memory, and a broken server must not exhaust it.
    static let maxEntrySize = CacheEntry.maxSize

    /// Why a URL or token cannot be used, said without the password or token.
    public struct Unusable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Throws `Unusable` when `url` is not an `http://` or `https://` URL moon can
    /// use, or the token cannot be sent (`tokenName` says where it came from).
    /// `tls`: an https URL's trust and client certificate, read at its first connection.
    public init(url: String, token: String?, tokenName: String = "the token", timeoutSeconds: Double, readOnly: Bool,
                tls: TLSFiles = TLSFiles(), onWarning: @escaping (String) -> Void) throws(Unusable) {
        do {
            client = try HTTPClient(endpoint: HTTPClient.Endpoint(parsing: url), token: token?.isEmpty == false ? token : nil,
                                    tokenName: tokenName, tls: tls)
        } catch {
            throw Unusable(description: error.description)
        }
        self.url = HTTPClient.Endpoint.redacted(url)
        self.readOnly = readOnly
        timeoutNanoseconds = UInt64(min(max(0.001, timeoutSeconds), Self.maxTimeoutSeconds) * 1e9)
        self.onWarning = onWarning
    }

    /// Whether `url`'s host is one of `hosts` (comma-separated `host` or
    /// `host:port`; a host without a port matches any port of it).
    public static func isApproved(_ url: String, hosts: String) -> Bool {
        guard let endpoint = try? HTTPClient.Endpoint(parsing: url) else { return false }
        let host = endpoint.host.lowercased()
        for item in hosts.split(separator: ",") {
            var text = item.trimmingCharacters(in: .whitespaces).lowercased()
            if text.hasPrefix("[") { text = text.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "") }
            if text == host { return true }
            if text == endpoint.authority.lowercased().replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "") {
                return true
            }
        }
        return false
    }

    /// `url` fit for a message: its password replaced by `***`.
    public static func redacted(_ url: String) -> String {
        HTTPClient.Endpoint.redacted(url)
    }

    /// The longest timeout a request is given: a request stays bounded.
    public static let maxTimeoutSeconds = 3600.0

    var isOff: Bool {
        return lock.withLock { _ in off || canceled }
    }

    /// The run stops: requests in flight end soon, and no more are sent.
    public func cancel() {
        lock.withLock { _ in canceled = true }
        client.closeIdle()
    }

    /// The entry stored under `key` (nil: none, or the remote is off).
    func entry(_ key: CacheKey) -> Data? {
        var data = Data()
        let found = (try? send("GET", "ac/" + key.hex, limit: Int64(Self.maxEntrySize)) { chunk in
            data.append(contentsOf: chunk)
        }) ?? false
        return found ? data : nil
    }

    /// Downloads blob `hash` into `directory`: streamed to a temporary file
    /// and hashed on the way, renamed into place only when its hash matches
    /// (`CacheError.corruptBlob` when not). false: a miss, or the remote is
    /// off (a body cut short turns it off, and so does one longer than
    /// `size`, the entry's word for it: a server sending without end, however
    /// fast, must not fill the disk nor hold the run).
    func downloadBlob(_ hash: String, size: Int64? = nil, into directory: CacheDirectory) throws -> Bool {
        guard !isOff else { return false }
        let location = try directory.temporaryLocation()
        let temp = location.display
        let fd = openat(location.directory, location.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CacheError.io("cannot create \(temp)", errno) }
        var kept = false
        defer { if !kept { location.unlink() } }
        var hasher = SHA256()
        var received: Int64 = 0
        let found: Bool
        do {
            let tooLong = size.map { "its blob \(hash) is longer than the \($0) bytes its entry says" }
            found = try send("GET", "cas/" + hash, limit: size ?? .max, expected: size, tooLong: tooLong) { chunk in
                received += Int64(chunk.count)
                hasher.update(bufferPointer: chunk)
                try Self.write(chunk, to: fd, temp)
            }
        } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw CacheError.io("cannot write \(temp)", errno) }
        guard found else { return false }
        guard BlobCopy.hex(hasher.finalize()) == hash else { throw CacheError.corruptBlob(hash) }
        try directory.placeBlob(location, hash: hash)
        kept = true
        return true
    }

    /// Uploads blob `hash` from `directory`, read from its file as it is
    /// sent; false when it is not there or the upload failed.
    func uploadBlob(_ hash: String, from directory: CacheDirectory) -> Bool {
        guard !isOff, !readOnly else { return false }
        guard let file = directory.openBlob(hash) else { return false }
        defer { close(file.descriptor) }
        return put("cas/" + hash, .file(file.descriptor, size: file.size))
    }

    func putEntry(_ key: CacheKey, _ data: Data) -> Bool {
        put("ac/" + key.hex, .bytes(data))
    }

    /// A GET whose 200 answer's body goes to `receive`: true for 200, false
    /// for a miss or when the remote is off (a server failure turns it off).
    /// Errors of `receive` (a local file) are thrown.
    /// `tooLong`: what to say of an answer longer than `limit`.
    private func send(_ method: String, _ path: String, limit: Int64, expected: Int64? = nil, tooLong: String? = nil,
                      receive: @escaping (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard !isOff else { return false }
        do {
            let status = try client.request(method, path, timeout: timeoutNanoseconds, limit: limit, expected: expected,
                                            shouldStop: { [weak self] in self?.isOff ?? true }, receive: receive)
            switch status {
            case 200: return true
            case 404: return false
            default:
                turnOff("it answered \(status) to \(method)")
                return false
            }
        } catch HTTPClient.Failure.refused(let why) {
            turnOff(tooLong ?? why)
            return false
        } catch let failure as HTTPClient.Failure {
            turnOff("\(failure)")
            return false
        }
    }

    private func put(_ path: String, _ body: HTTPClient.Body) -> Bool {
        guard !isOff, !readOnly else { return false }
        do {
            let status = try client.request("PUT", path, body: body, timeout: timeoutNanoseconds,
                                            shouldStop: { [weak self] in self?.isOff ?? true })
            guard (200..<300).contains(status) else {
                turnOff("it answered \(status) to PUT")
                return false
            }
            return true
        } catch {
            turnOff("\(error)")
            return false
        }
    }

    private static func write(_ chunk: UnsafeRawBufferPointer, to fd: Int32, _ path: String) throws {
        var offset = 0
        while offset < chunk.count {
            let n = Glibc.write(fd, chunk.baseAddress! + offset, chunk.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw CacheError.io("cannot write \(path)", errno)
            }
            offset += n
        }
    }

    private func turnOff(_ why: String) {
        let first = lock.withLock { _ in
            let first = !off && !canceled
            off = true
            return first
        }
        client.closeIdle()
        if first { onWarning("remote cache \(url): \(why); not using it for the rest of this run") }
    }
}
