import Foundation
import Testing

/// How moon reads the remote cache's URL, token and variables: the token
/// never reaches a node nor any output, a URL's password is never printed,
/// a URL moon cannot use is one clear warning at the start (and no
/// request), and the variables take their usual spellings or say why not.
@Suite struct RemoteCacheOptionsTests {
    func checkout() throws -> Moon { try RemoteCacheTests().checkout() }

    func run(_ moon: Moon, _ url: String, _ environment: [String: String] = [:]) throws -> Moon.Result {
        var environment = environment
        if environment["MOON_REMOTE_CACHE_TIMEOUT"] == nil { environment["MOON_REMOTE_CACHE_TIMEOUT"] = "10s" }
        return try moon.run(["run", "--json", "--remote-cache", url], environment: environment)
    }

    /// A checkout run against a new `RemoteCacheServer` answering `answer`
    /// (stopped after the run) at the URL `url` makes of it.
    func runAgainstServer(_ answer: RemoteCacheServer.Answer = .empty, ipv6: Bool = false, url: (RemoteCacheServer) -> String = \.url,
                          environment: [String: String] = [:]) throws -> (Moon.Result, RemoteCacheServer, Moon) {
        let server = try RemoteCacheServer(answer, ipv6: ipv6)
        defer { server.stop() }
        let moon = try checkout()
        return (try run(moon, url(server), environment), server, moon)
    }

    static func warnings(_ result: Moon.Result) -> [String] {
        result.stderr.split(separator: "\n").map(String.init).filter { $0.contains("warning") }
    }

    // MARK: The token

    @Test func theTokenIsSentButNeverReachesANodeNorTheOutput() throws {
        let server = try RemoteCacheServer()
        defer { server.stop() }
        let moon = try Moon(graph: RemoteCacheTests.graph + """

              leak:
                run: env | grep -i moon_remote || true
            """)
        try moon.write("a.c", "int a;\n")
        try moon.write("b.c", "int b;\n")
        let result = try run(moon, server.url, ["MOON_REMOTE_CACHE_TOKEN": "sekrit"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("sekrit"), "\(result.stdout)")
        #expect(!result.stderr.contains("sekrit"), "\(result.stderr)")
        #expect(!result.stdout.contains("MOON_REMOTE_CACHE_TOKEN"), "\(result.stdout)")
        #expect(server.requests.contains { $0.contains("\r\nAuthorization: Bearer sekrit\r\n") }, "\(server.requests)")
    }

    @Test func aTokenWithALineBreakIsRefusedAndNeverSent() throws {
        let (result, server, moon) = try runAgainstServer(environment: ["MOON_REMOTE_CACHE_TOKEN": "sekrit\r\nX-Injected: 1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(RemoteCacheTests.compiled(moon)) == ["a", "b", "app"])
        #expect(server.requests.isEmpty, "\(server.requests)")
        #expect(!result.stderr.contains("sekrit"), "\(result.stderr)")
        let warnings = Self.warnings(result)
        #expect(warnings.count == 1 && warnings[0].contains("MOON_REMOTE_CACHE_TOKEN"), "\(result.stderr)")
    }

    // MARK: The URL

    @Test func aPasswordInTheURLIsSentAsBasicAuthAndNeverPrinted() throws {
        let (result, server, _) = try runAgainstServer(.status(500), url: { "http://user:pa55word@127.0.0.1:\($0.port)/x" })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("pa55word"), "\(result.stderr)")
        #expect(result.stderr.contains("http://user:***@127.0.0.1:\(server.port)/x"), "\(result.stderr)")
        #expect(result.stderr.contains("answered 500"), "\(result.stderr)")
        let basic = "Basic " + Data("user:pa55word".utf8).base64EncodedString()
        #expect(server.requests.first?.contains("\r\nAuthorization: \(basic)\r\n") == true, "\(server.requests)")
    }

    /// The graph file's `cache: remote:` takes the same URLs and keeps the same secrets.
    @Test func aRemoteInTheGraphFileTakesAnUpperCaseSchemeAndHidesItsPassword() throws {
        let server = try RemoteCacheServer(.status(500))
        defer { server.stop() }
        let graph = RemoteCacheTests.graph.replacingOccurrences(
            of: "version: 1\n", with: "version: 1\ncache: { remote: \"HTTP://user:pa55word@127.0.0.1:\(server.port)/x\" }\n")
        let moon = try Moon(graph: graph)
        try moon.write("a.c", "int a;\n")
        try moon.write("b.c", "int b;\n")
        let result = try moon.run(["run", "--json"], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "10s"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("pa55word"), "\(result.stderr)")
        #expect(result.stderr.contains("HTTP://user:***@127.0.0.1:\(server.port)/x: it answered 500"), "\(result.stderr)")
        #expect(server.requests.first?.contains("\r\nAuthorization: Basic ") == true, "\(server.requests)")
    }

    /// Nor can a node read the token through an expression.
    @Test func anExpressionCannotReadTheToken() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              peek:
                env: { T: "${{ env.MOON_REMOTE_CACHE_TOKEN }}" }
                run: echo "T=$T"
            """)
        let result = try moon.run(["run"], environment: ["MOON_REMOTE_CACHE_TOKEN": "sekrit"])
        #expect(result.status == 1)
        #expect((result.stdout + result.stderr).contains("'MOON_REMOTE_CACHE_TOKEN' is not set"), "\(result.stdout)")
        #expect(!result.stdout.contains("sekrit") && !result.stderr.contains("sekrit"), "\(result.stdout)\(result.stderr)")
    }

    @Test func aPasswordAndATokenTogetherAreRefused() throws {
        let (result, server, _) = try runAgainstServer(url: { "http://user:pa55word@127.0.0.1:\($0.port)/x" }, environment: ["MOON_REMOTE_CACHE_TOKEN": "sekrit"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.isEmpty, "\(server.requests)")
        #expect(!result.stderr.contains("pa55word") && !result.stderr.contains("sekrit"), "\(result.stderr)")
        #expect(Self.warnings(result).count == 1, "\(result.stderr)")
    }

    /// Each URL moon cannot use: one warning that says what is wrong, no
    /// request, and the nodes run.
    @Test(arguments: [
        ("http://127.0.0.1:PORT/x?q=1#frag", "query"),
        ("http://127.0.0.1:PORT/x#frag", "fragment"),
        ("http://127.0.0.1:99999/x", "port"),
        ("http://127.0.0.1:0/x", "port"),
        ("http://127.0.0.1:8o/x", "port"),
        ("http://:80/x", "host"),
        ("http:///x", "host"),
        ("http://[::1/x", "host"),
        ("ftp://127.0.0.1:PORT/x", "http://"),
    ])
    func aURLMoonCannotUseIsOneClearWarning(url: String, says: String) throws {
        let (result, server, moon) = try runAgainstServer(url: { url.replacingOccurrences(of: "PORT", with: String($0.port)) })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(RemoteCacheTests.compiled(moon)) == ["a", "b", "app"])
        #expect(server.requests.isEmpty, "\(server.requests)")
        let warnings = Self.warnings(result)
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(warnings.first?.contains(says) == true, "\(result.stderr)")
        #expect(!result.stderr.contains("cannot resolve"), "\(result.stderr)")
    }

    /// URLs moon takes: the requests reach the server, under the path given.
    @Test func anUpperCaseSchemeAndASpaceInThePathWork() throws {
        let (result, server, _) = try runAgainstServer(url: { "HTTP://127.0.0.1:\($0.port)/my cache/" })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let lines = server.requestLines
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("GET /my%20cache/ac/") || $0.hasPrefix("PUT /my%20cache/") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("PUT /my%20cache/ac/") }, "\(lines)")
    }

    @Test(.enabled(if: RemoteCacheOptionsTests.hasIPv6Loopback, "no IPv6 loopback"))
    func anIPv6LiteralIsReachedOverIPv6() throws {
        let (result, server, _) = try runAgainstServer(ipv6: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(server.requests.first?.contains("\r\nHost: [::1]:\(server.port)\r\n") == true, "\(server.requests)")
        #expect(server.requestLines.contains { $0.hasPrefix("PUT /cache/ac/") }, "\(server.requestLines)")
    }

    static var hasIPv6Loopback: Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }

    // MARK: The variables

    @Test(arguments: ["1", "true", "TRUE", "yes", "On"])
    func readOnlyTakesTheUsualSpellingsOfTrue(value: String) throws {
        let (result, server, _) = try runAgainstServer(environment: ["MOON_REMOTE_CACHE_READ_ONLY": value])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(!server.requestLines.isEmpty)
        #expect(!server.requestLines.contains { $0.hasPrefix("PUT") }, "\(server.requestLines)")
    }

    @Test(arguments: ["0", "false", "No", "OFF", ""])
    func readOnlyTakesTheUsualSpellingsOfFalse(value: String) throws {
        let (result, server, _) = try runAgainstServer(environment: ["MOON_REMOTE_CACHE_READ_ONLY": value])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(server.requestLines.contains { $0.hasPrefix("PUT /cache/ac/") }, "\(server.requestLines)")
    }

    /// A value that is neither: a warning, and moon only reads (the safe side).
    @Test func readOnlyWarnsOnAnyOtherValue() throws {
        let (result, server, _) = try runAgainstServer(environment: ["MOON_REMOTE_CACHE_READ_ONLY": "maybe"])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = Self.warnings(result)
        #expect(warnings.count == 1 && warnings[0].contains("MOON_REMOTE_CACHE_READ_ONLY"), "\(result.stderr)")
        #expect(!server.requestLines.contains { $0.hasPrefix("PUT") }, "\(server.requestLines)")
    }

    /// An invalid timeout: one warning naming the variable and what it
    /// takes, and the remote is still used, with the default.
    @Test(arguments: ["abc", "-1", "1e9s", "0", "0s", "2h"])
    func anInvalidTimeoutIsOneWarningAndTheDefault(value: String) throws {
        let (result, server, _) = try runAgainstServer(environment: ["MOON_REMOTE_CACHE_TIMEOUT": value])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = Self.warnings(result)
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(warnings.first?.contains("MOON_REMOTE_CACHE_TIMEOUT") == true && warnings.first?.contains("5s") == true, "\(result.stderr)")
        #expect(server.requestLines.contains { $0.hasPrefix("PUT /cache/ac/") }, "\(server.requestLines)")
    }
}
