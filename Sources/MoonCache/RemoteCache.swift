import Foundation
import MoonCommand

/// A Bazel HTTP remote cache: `GET`/`PUT` of `URL/ac/<key>` (an entry) and
/// `URL/cas/<sha256>` (a blob), as bazel-remote or an nginx with WebDAV
/// `PUT` serve them. Every request has a deadline; the first failure
/// (unreachable, timed out, a 5xx, a refused upload) turns the remote off
/// for the rest of the run with one warning, and ends the requests still
/// in flight, so a broken server costs at most one timeout per run however
/// many requests wait on it at once. A 404 is a miss. Thread-safe: callers
/// send requests from several threads at once.
public final class RemoteCache: @unchecked Sendable {
    let client: HTTPClient
    /// The URL as given (never with the token, which is sent only as a header).
    public let url: String
    public let readOnly: Bool
    let timeoutNanoseconds: UInt64
    private let lock = Lock()
    private var off = false
    /// The run stopped: requests end without a warning.
    private var canceled = false
    private let onWarning: (String) -> Void

    /// nil when `url` is not a plain `http://` URL moon can reach.
    public init?(url: String, token: String?, timeoutSeconds: Double, readOnly: Bool, onWarning: @escaping (String) -> Void) {
        guard let endpoint = HTTPClient.Endpoint(url) else { return nil }
        client = HTTPClient(endpoint: endpoint, token: token?.isEmpty == false ? token : nil)
        self.url = url
        self.readOnly = readOnly
        timeoutNanoseconds = UInt64(max(0.001, timeoutSeconds) * 1e9)
        self.onWarning = onWarning
    }

    var isOff: Bool {
        lock.lock()
        defer { lock.unlock() }
        return off || canceled
    }

    /// The run stops: requests in flight end soon, and no more are sent.
    public func cancel() {
        lock.lock()
        canceled = true
        lock.unlock()
    }

    /// The entry stored under `key` (nil: none, or the remote is off).
    func entry(_ key: CacheKey) -> Data? {
        get("ac/" + key.hex)
    }

    /// Blob `hash` as the server sent it (checked by the caller).
    func blob(_ hash: String) -> Data? {
        get("cas/" + hash)
    }

    func putBlob(_ hash: String, _ data: Data) -> Bool {
        put("cas/" + hash, data)
    }

    func putEntry(_ key: CacheKey, _ data: Data) -> Bool {
        put("ac/" + key.hex, data)
    }

    private func get(_ path: String) -> Data? {
        guard !isOff else { return nil }
        do {
            let response = try client.request("GET", path, deadline: HTTPClient.now() + timeoutNanoseconds,
                                              shouldStop: { [weak self] in self?.isOff ?? true })
            switch response.status {
            case 200: return response.body
            case 404: return nil
            default:
                turnOff("it answered \(response.status) to GET")
                return nil
            }
        } catch {
            turnOff("\(error)")
            return nil
        }
    }

    private func put(_ path: String, _ data: Data) -> Bool {
        guard !isOff, !readOnly else { return false }
        do {
            let response = try client.request("PUT", path, body: data, deadline: HTTPClient.now() + timeoutNanoseconds,
                                              shouldStop: { [weak self] in self?.isOff ?? true })
            guard (200..<300).contains(response.status) else {
                turnOff("it answered \(response.status) to PUT")
                return false
            }
            return true
        } catch {
            turnOff("\(error)")
            return false
        }
    }

    private func turnOff(_ why: String) {
        lock.lock()
        let first = !off && !canceled
        off = true
        lock.unlock()
        if first { onWarning("remote cache \(url): \(why); not using it for the rest of this run") }
    }
}
