import Foundation
import Testing

/// How blobs and connections go between moon and a real nginx, with a
/// `FaultyProxy` in between to play a frozen server or a body cut short:
/// a large output streams both ways in little memory, connections are
/// kept and reused (and sent again when the server closed them), and a
/// server that freezes in the middle of a transfer costs one timeout and
/// one warning, never a wrong output, a hang or a process left behind.
@Suite(.enabled(if: Nginx.binary != nil, "nginx is not installed (make test-deps)"))
struct RemoteCacheTransferTests {
    /// The size of the large output: moon's peak memory must stay below it
    /// (reading a blob whole would take at least as much).
    static let bigSize = 64 << 20

    /// `big` writes a large random output; `probe`, after it, notes moon's
    /// peak resident memory (VmHWM, kB) once the upload is on the server
    /// when `SERVER_AC` names the server's entry directory.
    static let bigGraph = """
        version: 1
        nodes:
          big:
            sources: [seed.txt]
            generates: [build/big.bin]
            run: mkdir -p build && head -c \(bigSize) /dev/urandom > build/big.bin && echo big >> compiled.log
          probe:
            needs: [big]
            run: |
              i=0
              while [ -n "$SERVER_AC" ] && [ -z "$(ls "$SERVER_AC" 2>/dev/null)" ] && [ $i -lt 6000 ]; do sleep 0.02; i=$((i+1)); done
              grep VmHWM /proc/$PPID/status | tr -dc 0-9 > hwm.txt
        """

    func bigCheckout() throws -> Moon {
        let moon = try Moon(graph: Self.bigGraph)
        try moon.write("seed.txt", "1\n")
        return moon
    }

    /// Runs moon in `moon`'s directory with `arguments`, timed by the shell
    /// that starts it (not by this test, which may be resumed late): the
    /// result and moon's own seconds.
    func timedRun(_ moon: Moon, _ arguments: [String], environment: [String: String] = [:]) throws -> (Moon.Result, Double) {
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        let result = try shell("""
            start=$(date +%s%N); "$MOON" \(quoted); status=$?; end=$(date +%s%N)
            echo $(( (end - start) / 1000000 )) > .elapsed-ms; exit $status
            """, in: moon, environment: environment)
        let milliseconds = Double(moon.read(".elapsed-ms")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? .infinity
        return (result, milliseconds / 1000)
    }

    /// moon's peak resident memory in bytes as `probe` saw it (Int.max: not seen).
    static func peakMemory(_ moon: Moon) -> Int {
        Int(moon.read("hwm.txt") ?? "").map { $0 * 1024 } ?? .max
    }

    static func compiled(_ moon: Moon) -> [String] { RemoteCacheTests.compiled(moon) }

    /// Files left in the local cache's temporary directory (half downloads).
    static func temporaryFiles(_ moon: Moon) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: moon.path(".cache/v1/tmp"))) ?? []
    }

    static func warnings(_ result: Moon.Result) -> Int {
        result.stderr.components(separatedBy: "remote cache").count - 1
    }

    /// The first checkout's upload, straight to the server; the blob's name on it.
    func uploadBig(to server: Nginx) throws -> (Moon, String) {
        let first = try bigCheckout()
        let result = try first.run(["run", "--remote-cache", server.url],
                                   environment: ["SERVER_AC": server.directory.path("data/cache/ac"), "MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(result.status == 0, "\(result.stderr)")
        let blobs = server.files("cas")
        #expect(blobs.count == 1)
        return (first, blobs.first ?? "")
    }

    @Test func aLargeOutputStreamsUpAndDownInLittleMemory() throws {
        let server = try Nginx()
        let (first, blob) = try uploadBig(to: server)
        #expect(Self.peakMemory(first) < Self.bigSize, "moon's peak memory uploading: \(Self.peakMemory(first)) bytes")
        let size = (try? FileManager.default.attributesOfItem(atPath: server.directory.path("data/cache/cas/" + blob))[.size] as? Int) ?? 0
        #expect(size == Self.bigSize)

        let second = try bigCheckout()
        let restored = try second.run(["run", "--json", "--remote-cache", server.url, "--remote-cache-read-only"],
                                      environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stderr.isEmpty, "\(restored.stderr)")
        #expect(restored.outcome("big") == "cache-hit")
        #expect(Self.compiled(second).isEmpty)
        #expect(FileManager.default.contentsEqual(atPath: first.path("build/big.bin"), andPath: second.path("build/big.bin")))
        #expect(Self.peakMemory(second) < Self.bigSize, "moon's peak memory downloading: \(Self.peakMemory(second)) bytes")
        #expect(Self.temporaryFiles(second).isEmpty)
    }

    /// The server's answer ends in the middle of the blob: a miss and one
    /// warning, the node runs, and nothing of the half blob is kept.
    @Test func aBodyCutShortIsAMissAndAWarning() throws {
        let server = try Nginx()
        let (_, blob) = try uploadBig(to: server)
        let proxy = try FaultyProxy(to: server.port, fault: .cut, after: 8 << 20, .toClient)
        defer { proxy.shutdown() }
        let second = try bigCheckout()
        let result = try second.run(["run", "--json", "--remote-cache", proxy.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(proxy.tripped)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.compiled(second) == ["big"])
        #expect(result.stderr.contains("closed after"), "\(result.stderr)")
        #expect(Self.warnings(result) == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: second.path(".cache/v1/cas/\(blob.prefix(2))/\(blob)")))
        #expect(Self.temporaryFiles(second).isEmpty)
    }

    /// The server freezes in the middle of a download (as under SIGSTOP):
    /// one timeout, one warning, the node runs, and moon exits leaving no
    /// process behind.
    @Test func aServerFrozenMidDownloadCostsOneTimeout() throws {
        let server = try Nginx()
        _ = try uploadBig(to: server)
        let proxy = try FaultyProxy(to: server.port, fault: .freeze, after: 8 << 20, .toClient)
        defer { proxy.shutdown() }
        let second = try bigCheckout()
        defer { killSurvivors(of: second) }
        let (result, seconds) = try timedRun(second, ["run", "--json", "--remote-cache", proxy.url],
                                             environment: ["MOON_REMOTE_CACHE_TIMEOUT": "5s"])
        #expect(proxy.tripped)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.compiled(second) == ["big"])
        #expect(result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(Self.warnings(result) == 1, "\(result.stderr)")
        #expect(result.events("complete", node: "probe").count == 1)
        #expect(Self.temporaryFiles(second).isEmpty)
        #expect(survivors(of: second).isEmpty, "\(survivors(of: second))")
        // One 5 s timeout and a run of `big`; a wait for the frozen server would reach the runner's 60 s limit.
        #expect(seconds < 40, "moon took \(seconds) s")
    }

    /// The server freezes in the middle of an upload: moon prints its
    /// result, waits one timeout for the upload, warns once and exits ok.
    @Test func aServerFrozenMidUploadCostsOneTimeout() throws {
        let server = try Nginx()
        let proxy = try FaultyProxy(to: server.port, fault: .freeze, after: 8 << 20, .toServer)
        defer { proxy.shutdown() }
        let first = try bigCheckout()
        defer { killSurvivors(of: first) }
        let (result, seconds) = try timedRun(first, ["run", "--json", "--remote-cache", proxy.url],
                                             environment: ["MOON_REMOTE_CACHE_TIMEOUT": "5s"])
        #expect(proxy.tripped)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.compiled(first) == ["big"])
        #expect(result.events("graph-complete").count == 1)
        #expect(result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(Self.warnings(result) == 1, "\(result.stderr)")
        #expect(server.files("ac").isEmpty)
        #expect(survivors(of: first).isEmpty, "\(survivors(of: first))")
        #expect(seconds < 40, "moon took \(seconds) s")
    }

    /// 12 small cached nodes (`first.o`, `o0.o`…), each with a blob of its own.
    func smallCheckout() throws -> Moon {
        let moon = try Moon(graph: RemoteCacheTests.midRunGraph(count: 11))
        try moon.write("a.c", "int a;\n")
        try moon.write("b.c", "int b;\n")
        return moon
    }

    /// Uploads and downloads keep their connections: a run's requests go
    /// over one connection per worker, far fewer than requests.
    @Test func connectionsAreReusedAcrossRequests() throws {
        let server = try Nginx()
        let count = 12
        let uploads = try FaultyProxy(to: server.port)
        defer { uploads.shutdown() }
        let first = try smallCheckout()
        let stored = try first.run(["run", "--remote-cache", uploads.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(stored.status == 0 && stored.stderr.isEmpty, "\(stored.stderr)")
        #expect(server.files("ac").count == count)
        // A lookup, a blob and an entry per node; up to 8 lookups and 4 uploads at once.
        #expect(uploads.connections <= 12, "\(uploads.connections) connections for \(3 * count) requests")

        let downloads = try FaultyProxy(to: server.port)
        defer { downloads.shutdown() }
        let second = try smallCheckout()
        let restored = try second.run(["run", "--json", "--remote-cache", downloads.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(restored.status == 0 && restored.stderr.isEmpty, "\(restored.stderr)")
        #expect(Self.compiled(second).isEmpty)
        // An entry and a blob per node; up to 8 restore at once.
        #expect(downloads.connections <= 12, "\(downloads.connections) connections for \(2 * count) downloads")
    }

    /// A server that closes a kept connection just as the next request
    /// comes (before any byte of an answer): each such request goes again,
    /// once, on a new connection, with no warning and nothing lost.
    @Test func aRequestOnAConnectionTheServerClosedIsSentAgain() throws {
        let server = try Nginx()
        let count = 12
        let uploads = try FaultyProxy(to: server.port, fault: .closeReused)
        defer { uploads.shutdown() }
        let first = try smallCheckout()
        let stored = try first.run(["run", "--remote-cache", uploads.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(stored.status == 0 && stored.stderr.isEmpty, "\(stored.stderr)")
        #expect(server.files("ac").count == count)

        let downloads = try FaultyProxy(to: server.port, fault: .closeReused)
        defer { downloads.shutdown() }
        let second = try smallCheckout()
        let restored = try second.run(["run", "--json", "--remote-cache", downloads.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": "20s"])
        #expect(restored.status == 0 && restored.stderr.isEmpty, "\(restored.stderr)")
        #expect(Self.compiled(second).isEmpty)
        for i in 0..<count - 1 { #expect(second.read("build/o\(i).o") == "int b;\n\(i)\n") }
    }
}
