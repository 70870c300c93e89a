import Foundation
import Testing

/// A server that keeps sending, but too slowly to matter (a byte now and
/// then, in the answer's head or its body), is bounded like one that sends
/// nothing: one timeout, one warning, and moon runs the nodes itself.
@Suite struct RemoteCacheTimeoutTests {
    /// Runs the three-node graph of `RemoteCacheTests` against `server`
    /// with a 1 s timeout; the result and the seconds it took.
    func runAgainst(_ server: RemoteCacheServer) throws -> (Moon.Result, Moon, TimeInterval) {
        let moon = try RemoteCacheTests().checkout()
        let began = Date()
        let result = try moon.run(["run", "--json", "--remote-cache", server.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "1s"])
        return (result, moon, Date().timeIntervalSince(began))
    }

    func expectOneTimeout(_ result: Moon.Result, _ moon: Moon, _ seconds: TimeInterval) {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(RemoteCacheTests.compiled(moon)) == ["a", "b", "app"])
        #expect(result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        // One timeout of 1 s, not one per request nor a wait for the whole
        // trickle (which never ends); generous for a loaded machine.
        #expect(seconds < 30)
    }

    @Test func aServerTricklingItsBodyCostsOneTimeout() throws {
        let server = try RemoteCacheServer(.trickle(head: "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", slow: "x", every: 0.5))
        defer { server.stop() }
        let (result, moon, seconds) = try runAgainst(server)
        expectOneTimeout(result, moon, seconds)
    }

    @Test func aServerTricklingItsHeadCostsOneTimeout() throws {
        let server = try RemoteCacheServer(.trickle(head: "", slow: "HTTP/1.1 200 OK\r\nX-Slow: abcdefgh", every: 0.5))
        defer { server.stop() }
        let (result, moon, seconds) = try runAgainst(server)
        expectOneTimeout(result, moon, seconds)
    }

    /// Headers that keep coming fast but never end are no answer either.
    @Test func aServerSendingEndlessHeadersCostsOneWarning() throws {
        let server = try RemoteCacheServer(.trickle(head: "HTTP/1.1 200 OK\r\n", slow: "X-Many: more\r\n", every: 0.0001))
        defer { server.stop() }
        let (result, moon, seconds) = try runAgainst(server)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(RemoteCacheTests.compiled(moon)) == ["a", "b", "app"])
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        #expect(seconds < 30)
    }
}
