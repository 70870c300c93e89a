import Foundation
import Testing

/// An `https://` remote cache against a real nginx with TLS on 127.0.0.1,
/// with a CA and certificates the test makes with `openssl`: two checkouts
/// share work; a certificate the CA did not sign, one for another host, an
/// expired one, a plain http server and a server that never finishes its
/// handshake each cost one warning naming the problem, and the nodes run;
/// a server that asks for a client certificate gets one; and the hostile
/// answers of `RemoteCacheHostileTests` stay bounded through TLS.
@Suite(.enabled(if: Nginx.binary != nil && TLSProxy.hasOpenSSL, "nginx or openssl is not installed (make test-deps)"))
struct RemoteCacheTLSTests {
    /// A CA (`ca`), another one (`rogue`), and certificates (PEM, with
    /// their keys) in a temporary directory: `server` (the CA's, for
    /// 127.0.0.1), `stranger` (the rogue's, for 127.0.0.1), `elsewhere`
    /// (the CA's, for cache.example), `expired` (the CA's, for 127.0.0.1,
    /// out of date) and `client` (the CA's, for a client).
    final class Certificates {
        let directory: Moon

        init() throws {
            directory = try Moon()
            let made = try shell("""
                set -e
                key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
                ca() { key "$1"; openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=moon test $1" \\
                  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign; }
                leaf() {
                  key "$1"; openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$1"
                  printf 'subjectAltName=%s\\n' "$3" > "$1.ext"
                  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days "$4" -extfile "$1.ext"
                }
                ca ca; ca rogue
                leaf server ca IP:127.0.0.1 2
                leaf stranger rogue IP:127.0.0.1 2
                leaf elsewhere ca DNS:cache.example 2
                leaf expired ca IP:127.0.0.1 -1
                leaf client ca DNS:moon-client 2
                """, in: directory)
            #expect(made.status == 0, "openssl: \(made.stderr)")
        }

        func path(_ name: String) -> String { directory.path(name) }

        /// nginx's TLS with the certificate `name` and its key.
        func server(_ name: String, clientAuthority: String? = nil) -> Nginx.TLS {
            Nginx.TLS(certificate: path(name + ".pem"), key: path(name + ".key"), clientAuthority: clientAuthority.map { path($0 + ".pem") })
        }

        /// What moon needs to trust the test's CA.
        var trust: [String: String] { ["MOON_REMOTE_CACHE_CA": path("ca.pem")] }
    }

    func run(_ moon: Moon, _ url: String, _ environment: [String: String], timeout: String = "5s") throws -> Moon.Result {
        var environment = environment
        environment["MOON_REMOTE_CACHE_TIMEOUT"] = timeout
        return try moon.run(["run", "--json", "--remote-cache", url], environment: environment)
    }

    func warnings(_ result: Moon.Result) -> [String] { RemoteCacheOptionsTests.warnings(result) }

    /// One warning about the remote that says `says`, the nodes run, and nothing reached the server.
    func expectRefused(_ result: Moon.Result, _ moon: Moon, _ server: Nginx?, says: String) {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(RemoteCacheTests.compiled(moon)) == ["a", "b", "app"])
        #expect(warnings(result).count == 1, "\(result.stderr)")
        #expect(warnings(result).first?.contains(says) == true, "\(result.stderr)")
        #expect(result.stderr.contains("not using it for the rest of this run"), "\(result.stderr)")
        if let server { #expect(server.files("ac").isEmpty) }
    }

    @Test func twoCheckoutsShareWorkOverHTTPS() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("server"))
        let first = try RemoteCacheTests().checkout()
        let stored = try run(first, server.url, certificates.trust)
        #expect(stored.status == 0 && stored.stderr.isEmpty, "\(stored.stderr)")
        #expect(server.files("ac").count == 3)
        let second = try RemoteCacheTests().checkout()
        let restored = try run(second, server.url, certificates.trust)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stderr.isEmpty, "\(restored.stderr)")
        #expect(RemoteCacheTests.compiled(second).isEmpty)
        for node in ["a.o", "b.o", "app"] { #expect(restored.outcome(node) == "cache-hit") }
        #expect(second.read("bin/app") == "int a;\nint b;\n")
    }

    @Test func aCertificateTheCADidNotSignIsOneWarningAndTheNodesRun() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("stranger"))
        let moon = try RemoteCacheTests().checkout()
        let result = try run(moon, server.url, certificates.trust)
        expectRefused(result, moon, server, says: "certificate not trusted")
        #expect(result.stderr.contains("MOON_REMOTE_CACHE_CA"), "\(result.stderr)")
    }

    /// Without `MOON_REMOTE_CACHE_CA`, the system's store decides: the
    /// test's CA is not in it, until OpenSSL's own `SSL_CERT_FILE` names it.
    @Test func withoutTheVariableTheSystemsTrustedCertificatesDecide() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("server"))
        let moon = try RemoteCacheTests().checkout()
        expectRefused(try run(moon, server.url, [:]), moon, server, says: "certificate not trusted")
        let again = try RemoteCacheTests().checkout()
        let trusted = try run(again, server.url, ["SSL_CERT_FILE": certificates.path("ca.pem")])
        #expect(trusted.status == 0 && trusted.stderr.isEmpty, "\(trusted.stderr)")
        #expect(server.files("ac").count == 3)
    }

    @Test func aCertificateForAnotherHostIsRefused() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("elsewhere"))
        let moon = try RemoteCacheTests().checkout()
        expectRefused(try run(moon, server.url, certificates.trust), moon, server, says: "certificate is not for 127.0.0.1")
    }

    @Test func anExpiredCertificateIsRefused() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("expired"))
        let moon = try RemoteCacheTests().checkout()
        expectRefused(try run(moon, server.url, certificates.trust), moon, server, says: "certificate expired")
    }

    @Test func anHTTPSURLOfAPlainServerIsOneWarning() throws {
        let server = try Nginx()
        let moon = try RemoteCacheTests().checkout()
        let url = server.url.replacingOccurrences(of: "http://", with: "https://")
        expectRefused(try run(moon, url, [:]), moon, server, says: "TLS handshake failed")
    }

    /// A server that asks for a client certificate refuses moon without
    /// one (one warning naming the variables) and takes it with one.
    @Test func aClientCertificateIsSentWhenGiven() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("server", clientAuthority: "ca"))
        let moon = try RemoteCacheTests().checkout()
        let without = try run(moon, server.url, certificates.trust)
        #expect(without.status == 0, "\(without.stderr)")
        #expect(warnings(without).count == 1, "\(without.stderr)")
        #expect(server.files("ac").isEmpty)
        var identity = certificates.trust
        identity["MOON_REMOTE_CACHE_CERT"] = certificates.path("client.pem")
        identity["MOON_REMOTE_CACHE_KEY"] = certificates.path("client.key")
        let again = try RemoteCacheTests().checkout()
        let with = try run(again, server.url, identity)
        #expect(with.status == 0 && with.stderr.isEmpty, "\(with.stderr)")
        #expect(server.files("ac").count == 3)
    }

    /// TLS files moon cannot use are one warning naming the variable, at
    /// the first https connection; an http:// remote never reads them.
    @Test func tlsFilesMoonCannotUseAreOneWarningAndHTTPNeverReadsThem() throws {
        let certificates = try Certificates()
        let server = try Nginx(tls: certificates.server("server"))
        let cases: [([String: String], String)] = [
            (["MOON_REMOTE_CACHE_CA": certificates.path("missing.pem")], "MOON_REMOTE_CACHE_CA="),
            (["MOON_REMOTE_CACHE_CA": certificates.path("ca.key")], "holds no PEM certificate"),
            (["MOON_REMOTE_CACHE_KEY": certificates.path("client.key")], "without MOON_REMOTE_CACHE_CERT"),
            (certificates.trust.merging(["MOON_REMOTE_CACHE_CERT": certificates.path("client.pem"),
                                         "MOON_REMOTE_CACHE_KEY": certificates.path("server.key")]) { $1 }, "is not the key of"),
        ]
        for (environment, says) in cases {
            let moon = try RemoteCacheTests().checkout()
            expectRefused(try run(moon, server.url, environment), moon, server, says: says)
        }
        let plain = try Nginx()
        let moon = try RemoteCacheTests().checkout()
        let result = try run(moon, plain.url, ["MOON_REMOTE_CACHE_CA": certificates.path("missing.pem"),
                                               "MOON_REMOTE_CACHE_CERT": certificates.path("missing.pem")])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(plain.files("ac").count == 3)
    }

    // MARK: Hostile servers through TLS

    /// A server that accepts the connection and never answers the handshake: one timeout.
    @Test func aServerThatNeverHandshakesCostsOneTimeout() throws {
        let (fd, port) = try Nginx.listeningSocket()
        defer { close(fd) }
        let moon = try RemoteCacheTests().checkout()
        let began = Date()
        let result = try run(moon, "https://127.0.0.1:\(port)/cache", [:], timeout: "1s")
        #expect(Date().timeIntervalSince(began) < 30)
        expectRefused(result, moon, nil, says: "timed out")
    }

    @Test(.enabled(if: TLSProxy.hasPython, "python3 is not installed"), arguments: RemoteCacheHostileTests.endless)
    func anAnswerWithoutEndThroughTLSCostsABoundedTime(_ name: String, _ answer: RemoteCacheServer.Answer) throws {
        let certificates = try Certificates()
        let server = try RemoteCacheServer(answer)
        defer { server.stop() }
        let proxy = try TLSProxy(certificates, to: server.port)
        let moon = try RemoteCacheTests().checkout()
        let began = Date()
        let result = try run(moon, proxy.url, certificates.trust, timeout: "2s")
        #expect(result.status == 0, "\(name): \(result.stderr)")
        #expect(RemoteCacheTests.compiled(moon).sorted() == ["a", "app", "b"], "\(name)")
        #expect(Date().timeIntervalSince(began) < 30, "\(name)")
        #expect(!server.requests.isEmpty, "\(name)")
    }

    @Test(.enabled(if: TLSProxy.hasPython, "python3 is not installed"))
    func aBodyTrickledThroughTLSCostsOneTimeout() throws {
        let certificates = try Certificates()
        let server = try RemoteCacheServer(.trickle(head: "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", slow: "x", every: 0.5))
        defer { server.stop() }
        let proxy = try TLSProxy(certificates, to: server.port)
        let moon = try RemoteCacheTests().checkout()
        let began = Date()
        let result = try run(moon, proxy.url, certificates.trust, timeout: "1s")
        #expect(Date().timeIntervalSince(began) < 30)
        expectRefused(result, moon, nil, says: "timed out")
    }
}

/// A TLS front for a plain test server (`RemoteCacheServer`), forwarding
/// bytes as they are in both directions, so its hostile answers reach moon
/// through TLS unchanged (nginx as a proxy would parse and fix them).
/// Python's asyncio: one thread, each TLS session used from it alone.
final class TLSProxy {
    private let process = Process()
    let port: Int

    /// Whether Python, which plays the proxy, is on the PATH.
    static let hasPython = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/python3")
    }

    /// Whether the `openssl` tool that makes the tests' certificates is there.
    static let hasOpenSSL = ["/usr/bin/openssl", "/bin/openssl", "/usr/local/bin/openssl"].contains {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static let script = """
        import asyncio, ssl, sys
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        backend = int(sys.argv[3])
        async def pipe(reader, writer):
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def serve(reader, writer):
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", backend)
            except Exception:
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        async def main():
            server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
            print(server.sockets[0].getsockname()[1], flush=True)
            await server.serve_forever()
        asyncio.run(main())
        """

    init(_ certificates: RemoteCacheTLSTests.Certificates, to backend: Int) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, certificates.path("server.pem"), certificates.path("server.key"), String(backend)]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown)
        }
        self.port = port
    }

    var url: String { "https://127.0.0.1:\(port)/cache" }

    /// SIGKILL: the test process's ignored or blocked SIGTERM is Python's too.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
