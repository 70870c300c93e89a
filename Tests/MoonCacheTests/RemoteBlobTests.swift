import Foundation
import Testing
@testable import MoonCache

/// A blob from the remote cache that is longer than its entry says is
/// refused as it comes: a server that sends without end must not fill the
/// disk nor hold the run, however fast it sends.
@Suite struct RemoteBlobTests {
    @Test func aBlobLongerThanItsEntrySaysTurnsTheRemoteOff() throws {
        let body = String(repeating: "x", count: 1 << 20)
        let server = try ScriptedServer(answers: ["HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body])
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("moon-remoteblob-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = CacheDirectory(path: root)
        let warnings = Warnings()
        let remote = try RemoteCache(url: "http://\(server.endpoint.authority)/cache", token: nil, timeoutSeconds: 30, readOnly: true,
                                     onWarning: warnings.add)
        let hash = String(repeating: "a", count: 64)
        #expect(try remote.downloadBlob(hash, size: 16, into: directory) == false)
        #expect(remote.isOff)
        #expect(warnings.all.count == 1 && warnings.all[0].contains("longer than the 16 bytes"), "\(warnings.all)")
        #expect(!directory.hasBlob(hash))
    }

    final class Warnings: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        var all: [String] { lock.withLock { list } }
        func add(_ warning: String) { lock.withLock { list.append(warning) } }
    }
}
