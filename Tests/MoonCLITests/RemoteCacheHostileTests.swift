import Foundation
import Testing

/// A remote cache and its secrets under attack: a server whose answers
/// never end holds moon for a bounded time (bytes moon drops are capped, and
/// every request has a hard time bound); the token, and a password in
/// `MOON_REMOTE_CACHE`, are in no environment a node can read, moon's own
/// `/proc/<pid>/environ` included; and the token goes only to a URL the user
/// gave or approved, never to one a graph file names.
@Suite struct RemoteCacheHostileTests {
    static let chunk = String(repeating: "x", count: 16 * 1024)

    // MARK: Answers without end

    static let endless: [(String, RemoteCacheServer.Answer)] = [
        ("404, chunked, endless", .flood(head: "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n",
                                         body: "4000\r\n" + chunk + "\r\n")),
        ("404 to the end of the connection", .flood(head: "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n", body: chunk)),
        ("404 with a huge Content-Length", .flood(head: "HTTP/1.1 404 Not Found\r\nContent-Length: 9223372036854775807\r\n\r\n",
                                                  body: chunk)),
        ("200 to PUT, chunked, endless", .byMethod(get: .empty, put: .flood(
            head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "4000\r\n" + chunk + "\r\n"))),
        ("200 to GET with a huge Content-Length", .byMethod(get: .flood(
            head: "HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387904\r\n\r\n", body: chunk), put: .empty)),
    ]

    @Test(arguments: endless)
    func aServerWhoseAnswerNeverEndsCostsABoundedTime(_ name: String, _ answer: RemoteCacheServer.Answer) throws {
        let server = try RemoteCacheServer(answer)
        defer { server.stop() }
        let moon = try RemoteCacheTests().checkout()
        let start = Date()
        let result = try moon.run(["run", "--json", "--remote-cache", server.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "2s"],
                                  limit: 60)
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.status == 0, "\(name): \(result.stderr)")
        #expect(RemoteCacheTests.compiled(moon).sorted() == ["a", "app", "b"], "\(name)")
        // Three nodes, a lookup and uploads each: a few timeouts at most, never the server's stamina.
        #expect(elapsed < 15, "\(name): \(elapsed) s")
        #expect(!server.requests.isEmpty)
    }

    // MARK: Secrets in moon's environment

    /// A node that reads the environment of every process above it
    /// (moon's `/proc/<pid>/environ` included) into `seen.txt`.
    static let peekingGraph = """
        version: 1
        nodes:
          peek:
            run: |
              env > seen.txt
              p=$$
              for i in 1 2 3 4 5; do
                p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2)
                [ "$p" -gt 1 ] || break
                echo "== $p $(cat /proc/$p/comm)" >> seen.txt
                tr '\\0' '\\n' < /proc/$p/environ >> seen.txt
              done
        """

    @Test(arguments: [
        ("a token", ["MOON_REMOTE_CACHE_TOKEN": "s3cr3t-token-of-the-user"], "s3cr3t-token-of-the-user", false),
        ("a password in MOON_REMOTE_CACHE", ["MOON_REMOTE_CACHE": "http://alice:pa55word-of-alice@127.0.0.1:PORT/cache"],
         "pa55word-of-alice", true),
        ("a token beside a URL from the variable", ["MOON_REMOTE_CACHE_TOKEN": "s3cr3t-token-of-the-user",
                                                    "MOON_REMOTE_CACHE": "http://127.0.0.1:PORT/cache"], "s3cr3t-token-of-the-user", true),
    ])
    func noNodeFindsTheSecretsInMoonsEnvironment(_ name: String, _ variables: [String: String], _ secret: String,
                                                 _ fromVariable: Bool) throws {
        let server = try RemoteCacheServer()
        defer { server.stop() }
        let moon = try Moon(graph: Self.peekingGraph)
        var environment = variables.mapValues { $0.replacingOccurrences(of: "PORT", with: String(server.port)) }
        environment["MOON_REMOTE_CACHE_TIMEOUT"] = "10s"
        let arguments = fromVariable ? ["run"] : ["run", "--remote-cache", server.url]
        let result = try moon.run(arguments, environment: environment)
        #expect(result.status == 0, "\(name): \(result.stderr)")
        let seen = moon.read("seen.txt") ?? ""
        // The walk reached moon: its own variables are there.
        #expect(seen.contains("== ") && seen.contains("MOON_CACHE_DIR="), "\(name): \(seen)")
        #expect(!seen.contains(secret), "\(name): \(seen)")
        #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(name)")
    }

    /// moon itself still has the secret: it reaches the server.
    @Test func theWipedTokenStillReachesTheServer() throws {
        let server = try RemoteCacheServer()
        defer { server.stop() }
        let moon = try Moon(graph: CacheTests.graph)
        try moon.write("src.txt", "a\n")
        let result = try moon.run(["run"], environment: ["MOON_REMOTE_CACHE_TOKEN": "tok-123", "MOON_REMOTE_CACHE": server.url])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.contains { $0.contains("\r\nAuthorization: Bearer tok-123\r\n") }, "\(server.requests)")
    }

    // MARK: Where the token goes

    func runGraphRemote(_ environment: [String: String], include: Bool = false) throws -> (Moon.Result, RemoteCacheServer) {
        let server = try RemoteCacheServer()
        defer { server.stop() }
        let cache = "cache: { remote: \"\(server.url)\" }\n"
        let moon = try Moon(graph: """
            version: 1
            \(include ? "includes: { lib: lib.yaml }\n" : cache)nodes:
              build: { sources: [src.txt], generates: [out.txt], run: cp src.txt out.txt }
            """)
        try moon.write("lib.yaml", "version: 1\n" + cache + "nodes:\n  x: { run: 'true' }\n")
        try moon.write("src.txt", "a\n")
        var environment = environment
        environment["MOON_REMOTE_CACHE_TIMEOUT"] = "10s"
        return (try moon.run(["run", "build"], environment: environment), server)
    }

    static func sentToken(_ server: RemoteCacheServer) -> Bool {
        server.requests.contains { $0.contains("\r\nAuthorization: Bearer tok-123\r\n") }
    }

    @Test func aGraphFilesURLGetsNoTokenAndAWarning() throws {
        let (result, server) = try runGraphRemote(["MOON_REMOTE_CACHE_TOKEN": "tok-123"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!server.requests.isEmpty)
        #expect(!Self.sentToken(server), "\(server.requests)")
        #expect(!server.requests.contains { $0.contains("Authorization") })
        let warnings = result.stderr.components(separatedBy: "MOON_REMOTE_CACHE_TOKEN_HOST").count - 1
        #expect(warnings == 1, "\(result.stderr)")
    }

    @Test(arguments: [("127.0.0.1", true), ("127.0.0.1:PORT", true), ("cache.example.com, 127.0.0.1:PORT", true),
                      ("cache.example.com", false), ("127.0.0.1:1", false)])
    func aGraphFilesURLGetsTheTokenOnlyWhenItsHostIsApproved(_ hosts: String, _ approved: Bool) throws {
        // The port is the server's, known only once it listens: approve through a placeholder rewritten below.
        let server = try RemoteCacheServer()
        defer { server.stop() }
        let moon = try Moon(graph: """
            version: 1
            cache: { remote: "\(server.url)" }
            nodes:
              build: { sources: [src.txt], generates: [out.txt], run: cp src.txt out.txt }
            """)
        try moon.write("src.txt", "a\n")
        let result = try moon.run(["run"], environment: [
            "MOON_REMOTE_CACHE_TOKEN": "tok-123", "MOON_REMOTE_CACHE_TIMEOUT": "10s",
            "MOON_REMOTE_CACHE_TOKEN_HOST": hosts.replacingOccurrences(of: "PORT", with: String(server.port)),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.sentToken(server) == approved, "\(hosts): \(server.requests)")
        #expect(result.stderr.contains("MOON_REMOTE_CACHE_TOKEN_HOST") == !approved, "\(result.stderr)")
    }

    @Test func aURLTheUserGaveGetsTheToken() throws {
        for viaFlag in [true, false] {
            let server = try RemoteCacheServer()
            defer { server.stop() }
            let moon = try Moon(graph: CacheTests.graph)
            try moon.write("src.txt", "a\n")
            var environment = ["MOON_REMOTE_CACHE_TOKEN": "tok-123"]
            if !viaFlag { environment["MOON_REMOTE_CACHE"] = server.url }
            let result = try moon.run(viaFlag ? ["run", "--remote-cache", server.url] : ["run"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.sentToken(server), "\(viaFlag): \(server.requests)")
            #expect(!result.stderr.contains("MOON_REMOTE_CACHE_TOKEN_HOST"))
        }
    }

    /// An included file's `cache:` is not the run's (only the top graph file's counts): no request goes to its URL.
    @Test func anIncludedFilesRemoteIsNotUsed() throws {
        let (result, server) = try runGraphRemote(["MOON_REMOTE_CACHE_TOKEN": "tok-123"], include: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.isEmpty, "\(server.requests)")
    }
}
