import Foundation
import Testing

/// A real nginx with WebDAV PUT on 127.0.0.1 (a free port, a temporary
/// directory), stopped when the test lets go of it; over TLS when given a
/// certificate.
final class Nginx {
    /// The server's certificate and key (PEM files), and the CA a client's
    /// certificate must be signed by (nil: none is asked for).
    struct TLS {
        var certificate: String
        var key: String
        var clientAuthority: String? = nil
    }

    static let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let directory: Moon
    let port: Int
    let secure: Bool
    private var process: Process?

    /// `answer`: nil serves files; a status code answers every request with it.
    init(answer: Int? = nil, tls: TLS? = nil) throws {
        directory = try Moon()
        secure = tls != nil
        port = try Self.freePort()
        let root = directory.path("")
        try directory.makeDirectory("data")
        try directory.makeDirectory("tmp")
        let location = answer.map { "return \($0);" } ?? "dav_methods PUT; create_full_put_path on; client_max_body_size 0;"
        var server = ""
        if let tls {
            server = "ssl_certificate \(tls.certificate); ssl_certificate_key \(tls.key);"
            if let clientAuthority = tls.clientAuthority {
                server += " ssl_verify_client on; ssl_client_certificate \(clientAuthority);"
            }
        }
        try directory.write("nginx.conf", """
            daemon off;
            \(getuid() == 0 ? "user root;" : "")
            pid \(root)/nginx.pid;
            error_log \(root)/error.log;
            events {}
            http {
              access_log off;
              client_body_temp_path \(root)/tmp;
              server {
                listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl");
                \(server)
                root \(root)/data;
                location / { \(location) }
              }
            }
            """)
        try start()
    }

    var url: String { "\(secure ? "https" : "http")://127.0.0.1:\(port)/cache" }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary!)
        process.arguments = ["-c", directory.path("nginx.conf"), "-p", directory.path("")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        #expect(eventually(20) { Self.accepts(self.port) }, "nginx did not start: \(directory.read("error.log") ?? "")")
    }

    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    deinit { stop() }

    /// The files under `data/cache/<kind>` (`ac` or `cas`).
    func files(_ kind: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path("data/cache/" + kind))) ?? []
    }

    static func freePort() throws -> Int {
        let (fd, port) = try listeningSocket()
        close(fd)
        return port
    }

    /// A socket listening on 127.0.0.1 at a free port, which never accepts.
    static func listeningSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 64) == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
