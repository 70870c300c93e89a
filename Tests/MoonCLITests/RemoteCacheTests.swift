import Foundation
import MoonEvents
import Testing

/// The remote cache against a real nginx: two checkouts with their own
/// `.moon/` and local caches share work through it; a damaged blob, a
/// stopped server, a server answering 500 and one that never answers cost
/// a warning and a local run, never a wrong output or a hang.
@Suite(.enabled(if: Nginx.binary != nil, "nginx is not installed (make test-deps)"))
struct RemoteCacheTests {
    static let graph = """
        version: 1
        nodes:
          a.o:
            sources: [a.c]
            generates: [build/a.o]
            run: mkdir -p build && cp a.c build/a.o && echo a >> compiled.log
          b.o:
            sources: [b.c]
            generates: [build/b.o]
            run: mkdir -p build && cp b.c build/b.o && echo b >> compiled.log
          app:
            needs: [a.o, b.o]
            sources: [build/a.o, build/b.o]
            generates: [bin]
            run: mkdir -p bin && cat build/a.o build/b.o > bin/app && chmod 755 bin/app && echo app >> compiled.log
        """

    func checkout() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.write("a.c", "int a;\n")
        try moon.write("b.c", "int b;\n")
        return moon
    }

    static func compiled(_ moon: Moon) -> [String] {
        (moon.read("compiled.log") ?? "").split(separator: "\n").map(String.init)
    }

    func run(_ moon: Moon, _ url: String, _ extra: [String] = [], timeout: String = "2s") throws -> Moon.Result {
        try moon.run(["run", "--json", "--remote-cache", url] + extra, environment: ["MOON_REMOTE_CACHE_TIMEOUT": timeout])
    }

    @Test func aSecondCheckoutRestoresEverythingAndCompilesNothing() throws {
        let server = try Nginx()
        let first = try checkout()
        #expect(try run(first, server.url).status == 0)
        #expect(Self.compiled(first) == ["a", "b", "app"] || Self.compiled(first) == ["b", "a", "app"])
        #expect(server.files("ac").count == 3)
        let second = try checkout()
        let restored = try run(second, server.url, ["--remote-cache-read-only"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stderr.isEmpty, "\(restored.stderr)")
        #expect(Self.compiled(second).isEmpty)
        for node in ["a.o", "b.o", "app"] { #expect(restored.outcome(node) == "cache-hit") }
        #expect(second.read("bin/app") == "int a;\nint b;\n")
        let mode = try FileManager.default.attributesOfItem(atPath: second.path("bin/app"))[.posixPermissions] as? Int
        #expect(mode == 0o755)
    }

    @Test func aCorruptedBlobOnTheServerIsAMissAndAWarning() throws {
        let server = try Nginx()
        let first = try checkout()
        #expect(try run(first, server.url).status == 0)
        for blob in server.files("cas") {
            try "evil\n".write(toFile: server.directory.path("data/cache/cas/" + blob), atomically: false, encoding: .utf8)
        }
        let second = try checkout()
        let result = try run(second, server.url)
        #expect(result.status == 0)
        #expect(result.stderr.contains("does not match its hash"), "\(result.stderr)")
        #expect(Set(Self.compiled(second)) == ["a", "b", "app"])
        #expect(second.read("bin/app") == "int a;\nint b;\n")
    }

    /// A blob longer than its entry says is refused as it comes (a server
    /// sending without end must not fill the disk): one warning, and the
    /// nodes run.
    @Test func aBlobLongerThanItsEntrySaysIsRefused() throws {
        let server = try Nginx()
        let first = try checkout()
        #expect(try run(first, server.url).status == 0)
        for blob in server.files("cas") {
            try Data(count: 4 << 20).write(to: URL(fileURLWithPath: server.directory.path("data/cache/cas/" + blob)))
        }
        let second = try checkout()
        let result = try run(second, server.url)
        #expect(result.status == 0)
        #expect(result.stderr.contains("bytes its entry says"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        #expect(Set(Self.compiled(second)) == ["a", "b", "app"])
        #expect(second.read("bin/app") == "int a;\nint b;\n")
    }

    @Test func aStoppedServerCostsOneWarning() throws {
        let server = try Nginx()
        let first = try checkout()
        #expect(try run(first, server.url).status == 0)
        server.stop()
        let second = try checkout()
        let result = try run(second, server.url)
        #expect(result.status == 0)
        #expect(Set(Self.compiled(second)) == ["a", "b", "app"])
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not using it for the rest of this run"))
    }

    @Test func aServerAnswering500CostsOneWarning() throws {
        let server = try Nginx(answer: 500)
        let moon = try checkout()
        let result = try run(moon, server.url)
        #expect(result.status == 0)
        #expect(Set(Self.compiled(moon)) == ["a", "b", "app"])
        #expect(result.stderr.contains("answered 500"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
    }

    /// A server that accepts connections and never answers: one timeout,
    /// then the run goes on without it.
    @Test func aServerThatHangsCostsOneTimeout() throws {
        let (fd, port) = try Nginx.listeningSocket()
        defer { close(fd) }
        let moon = try checkout()
        let began = Date()
        let result = try run(moon, "http://127.0.0.1:\(port)/cache", timeout: "1s")
        #expect(result.status == 0)
        #expect(Set(Self.compiled(moon)) == ["a", "b", "app"])
        #expect(result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        // One timeout, not one per node and request (generous for a loaded machine).
        #expect(Date().timeIntervalSince(began) < 30)
    }

    @Test func twoProcessesUploadingTheSameEntriesAtOnce() throws {
        let server = try Nginx()
        let first = try checkout()
        let second = try checkout()
        let environment = ["MOON_REMOTE_CACHE_TIMEOUT": "5s"]
        let a = try first.start(["run", "--remote-cache", server.url], environment: environment)
        let b = try second.start(["run", "--remote-cache", server.url], environment: environment)
        let ra = try a.wait(), rb = try b.wait()
        #expect(ra.status == 0 && rb.status == 0, "\(ra.stderr)\(rb.stderr)")
        #expect(ra.stderr.isEmpty && rb.stderr.isEmpty, "\(ra.stderr)\(rb.stderr)")
        let third = try checkout()
        let restored = try run(third, server.url)
        #expect(Self.compiled(third).isEmpty)
        #expect(third.read("bin/app") == "int a;\nint b;\n")
        #expect(restored.stderr.isEmpty, "\(restored.stderr)")
    }

    /// A graph whose `halt` node (no sources: never cached) waits, in the
    /// middle of the run, until the test has done something to the server;
    /// `count` cached objects come after it.
    static func midRunGraph(count: Int) -> String {
        var graph = """
            version: 1
            nodes:
              first.o:
                sources: [a.c]
                generates: [build/first.o]
                run: mkdir -p build && cp a.c build/first.o && echo first >> compiled.log
              halt:
                needs: [first.o]
                run: if [ -f halt.wait ]; then touch halted; while [ ! -f go ]; do sleep 0.02; done; fi

            """
        for i in 0..<count {
            graph += """
                  o\(i).o:
                    needs: [halt]
                    sources: [b.c]
                    generates: [build/o\(i).o]
                    run: mkdir -p build && (cat b.c; echo \(i)) > build/o\(i).o && echo o\(i) >> compiled.log

                """
        }
        return graph
    }

    func midRunCheckout(count: Int) throws -> Moon {
        let moon = try Moon(graph: Self.midRunGraph(count: count))
        try moon.write("a.c", "int a;\n")
        try moon.write("b.c", "int b;\n")
        return moon
    }

    /// Runs the mid-run graph in `moon` and, once `halt` is reached, does
    /// `action` to the server; the result and the seconds from then on.
    func runHalting(_ moon: Moon, _ server: Nginx, timeout: String, _ action: () -> Void) throws -> (Moon.Result, TimeInterval) {
        try moon.write("halt.wait", "")
        let running = try moon.start(["run", "--json", "--remote-cache", server.url], environment: ["MOON_REMOTE_CACHE_TIMEOUT": timeout])
        #expect(eventually(60) { FileManager.default.fileExists(atPath: moon.path("halted")) }, "halt was never reached")
        action()
        let began = Date()
        try moon.write("go", "")
        let result = try running.wait()
        return (result, Date().timeIntervalSince(began))
    }

    /// The server goes away in the middle of a run (after a hit, before
    /// more lookups): the run ends correctly with one warning.
    @Test func aServerStoppedMidRunCostsOneWarning() throws {
        let server = try Nginx()
        let count = 6
        let first = try midRunCheckout(count: count)
        #expect(try run(first, server.url).status == 0)
        #expect(server.files("ac").count == count + 1)
        let second = try midRunCheckout(count: count)
        let (result, _) = try runHalting(second, server, timeout: "20s") { server.stop() }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("first.o") == "cache-hit", "\(result.stderr)")
        #expect(Set(Self.compiled(second)) == Set((0..<count).map { "o\($0)" }))
        for i in 0..<count { #expect(second.read("build/o\(i).o") == "int b;\n\(i)\n") }
        #expect(result.stderr.components(separatedBy: "remote cache").count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not using it for the rest of this run"), "\(result.stderr)")
    }

    /// A lookup that waits for the server happens off moon's event loop:
    /// a node that needs no lookup starts and ends meanwhile.
    @Test func aSlowLookupDoesNotHoldOtherNodes() throws {
        let (fd, port) = try Nginx.listeningSocket()
        defer { close(fd) }
        let moon = try Moon(graph: """
            version: 1
            nodes:
              cached:
                sources: [a.c]
                generates: [build/a.o]
                run: mkdir -p build && cp a.c build/a.o
              quick:
                run: echo quick
            """)
        try moon.write("a.c", "int a;\n")
        let result = try moon.run(["run", "--json", "--remote-cache", "http://127.0.0.1:\(port)/cache"],
                                  environment: ["MOON_REMOTE_CACHE_TIMEOUT": "8s"])
        #expect(result.status == 0, "\(result.stderr)")
        let kinds = result.events.compactMap { event -> String? in
            guard let node = event.node else { return nil }
            let kind = event.name
            return "\(kind) \(node)"
        }
        let quickDone = kinds.firstIndex(of: "complete quick"), cachedStart = kinds.firstIndex(of: "start cached")
        #expect(quickDone != nil && cachedStart != nil && quickDone! < cachedStart!, "\(kinds)")
    }
}
