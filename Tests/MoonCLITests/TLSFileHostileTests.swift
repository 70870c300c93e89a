import Foundation
import Testing

/// The PEM files named by `MOON_REMOTE_CACHE_CA`, `_CERT` and `_KEY`, which
/// OpenSSL opens and reads by path without a bound: a FIFO nobody writes
/// to, a device and a sparse giant are one warning naming the variable, at
/// once, and the nodes run themselves; never a hang (a FIFO's open used to
/// block moon for good, past SIGTERM).
@Suite struct TLSFileHostileTests {
    @Test(arguments: ["MOON_REMOTE_CACHE_CA", "MOON_REMOTE_CACHE_CERT", "MOON_REMOTE_CACHE_KEY"])
    func aFIFOADeviceOrAGiantIsOneWarningAtOnce(variable: String) throws {
        // A server that takes the connection and never answers: the files
        // are read at the first https connection, before the handshake.
        let (listener, port) = try Nginx.listeningSocket()
        defer { close(listener) }
        let moon = try RemoteCacheTests().checkout()
        #expect(mkfifo(moon.path("fifo.pem"), 0o644) == 0)
        let fd = open(moon.path("giant.pem"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 2 << 30) == 0)
        close(fd)
        try moon.write("client.pem", "not a certificate\n")
        for (file, says) in [("fifo.pem", "fifo.pem is a FIFO, not a PEM file"),
                             ("/dev/zero", "/dev/zero is a device or a socket, not a PEM file"),
                             ("giant.pem", "giant.pem is 2 GiB; a PEM file moon reads is at most 16 MiB")] {
            var environment = [variable: file == "/dev/zero" ? file : moon.path(file), "MOON_REMOTE_CACHE_TIMEOUT": "2s"]
            // A key is read only beside a client certificate, which is checked first.
            if variable == "MOON_REMOTE_CACHE_KEY" { environment["MOON_REMOTE_CACHE_CERT"] = moon.path("client.pem") }
            let began = Date()
            let result = try moon.run(["run", "--force", "--remote-cache", "https://127.0.0.1:\(port)/cache"],
                                      environment: environment, limit: 60)
            #expect(Date().timeIntervalSince(began) < 30, "\(file)")
            #expect(result.status == 0, "\(file): \(result.stderr)")
            #expect(result.stderr.contains("\(variable)="), "\(file): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(file): \(result.stderr)")
            #expect(result.stderr.components(separatedBy: "warning:").count == 2, "one warning: \(result.stderr)")
        }
    }
}
