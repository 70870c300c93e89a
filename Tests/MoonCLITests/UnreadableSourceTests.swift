import Foundation
import Testing

/// A source moon cannot read (mode 000 for a user who is not root): its
/// content is unknown, so its stat stands in for it in the up-to-date
/// check, and the node is never stored in nor restored from the output
/// cache, whose key must cover what the outputs were made from.
@Suite struct UnreadableSourceTests {
    static let graph = """
        version: 1
        nodes:
          gen:
            sources: [in/*.txt]
            generates: [out.txt]
            run: cat in/a.txt > out.txt
          obj:
            sources: [a.c]
            generates: [a.o]
            depfile: a.d
            run: |
              cp a.c a.o && printf 'a.o: a.c in/secret.txt\\n' > a.d
        """

    @Test func aSourceMoonCannotReadStillCounts() throws {
        // Root reads every file: moon runs as a user of its own.
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            print("aSourceMoonCannotReadStillCounts: skipped, it needs root and setpriv to run moon as a user who cannot read a file")
            return
        }
        let uid = 50_000 + Int(getpid() % 10_000)
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("in")
        try moon.write("in/a.txt", "a\n")
        try moon.write("in/secret.txt", "s1\n")
        try moon.write("a.c", "c\n")
        try #require(try shell("chmod 000 in/secret.txt && chown -R \(uid):\(uid) .", in: moon).status == 0)
        let asUser = "/usr/bin/setpriv --reuid=\(uid) --regid=\(uid) --clear-groups env HOME=\"$PWD\" \"$MOON\" run --json"
        func run() throws -> Moon.Result {
            let result = try shell(asUser, in: moon)
            #expect(result.status == 0, "\(result.stderr)")
            return result
        }
        // Through `env`, as the runs below: setpriv's own exec still has
        // root's capabilities and reaches a binary the user cannot.
        let reachable = try shell("/usr/bin/setpriv --reuid=\(uid) --regid=\(uid) --clear-groups env \"$MOON\" --version", in: moon)
        guard reachable.status == 0 else {
            print("aSourceMoonCannotReadStillCounts: skipped, uid \(uid) cannot run moon: \(reachable.stderr)")
            return
        }

        let first = try run()
        #expect(first.outcome("gen") == "ran")
        #expect(first.outcome("obj") == "ran")
        #expect(try run().outcome("gen") == "up-to-date")
        // Changed while unreadable: the stat tells, as it would tell make.
        try #require(try shell("printf 's2, longer\\n' > in/secret.txt", in: moon).status == 0)
        #expect(try run().outcome("gen") == "ran", "an unreadable source that changed reruns its node")
        #expect(try run().outcome("gen") == "up-to-date")

        // A second checkout with the same files: nothing was cached, so the node runs.
        try #require(try shell("rm -rf .moon out.txt a.o a.d", in: moon).status == 0)
        let again = try run()
        #expect(again.outcome("gen") == "ran", "a node with an unreadable source is never restored")
        #expect(again.outcome("obj") == "ran", "nor one whose depfile lists an unreadable file")
        #expect(again.events("skip").isEmpty)
        #expect(moon.read("out.txt") == "a\n")
    }
    /// A source whose read would block or has no end, though it may say it
    /// is a regular file (tracefs's `trace_pipe`, a FIFO whose writer never
    /// writes, a procfs file), named by a pattern or by a depfile: `moon
    /// run` and `moon status` finish at once; the file is not read (its
    /// stat stands in). `/proc/kmsg` is left alone: reading it would take
    /// the host's kernel log.
    @Test func aSourceThatBlocksOnReadNeverHangs() throws {
        let moon = try Moon()
        var sources = ["fifo", "/proc/self/status"]
        // A writer that never writes: the test holds the FIFO open (read-write, so the open does not wait).
        try #require(mkfifo(moon.path("fifo"), 0o644) == 0)
        let writer = open(moon.path("fifo"), O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        if getuid() == 0, try shell("mkdir tracing && mount -t tracefs nodev tracing", in: moon).status == 0 {
            sources.append(moon.path("tracing/trace_pipe"))
        } else {
            print("aSourceThatBlocksOnReadNeverHangs: tracefs not tried (it needs root to mount)")
        }
        defer { _ = try? shell("umount tracing 2>/dev/null", in: moon) }
        for source in sources {
            for how in ["pattern", "depfile"] {
                try moon.write("moon.yaml", how == "pattern" ? """
                    version: 1
                    nodes:
                      a: { sources: ["\(source)"], run: "echo ran" }
                    """ : """
                    version: 1
                    nodes:
                      a: { sources: [in.txt], depfile: a.d, run: "printf 'out: in.txt \(source)\\n' > a.d" }
                    """)
                try moon.write("in.txt", "in\n")
                _ = try shell("rm -rf .moon", in: moon)
                for words in ["run", "status", "run"] {
                    let began = Date()
                    let result = try shell("timeout -k 2 20 \"$MOON\" \(words)", in: moon)
                    #expect(result.status == 0, "\(how) \(source): moon \(words): \(result.status) \(result.stderr)")
                    #expect(Date().timeIntervalSince(began) < 15, "\(how) \(source): moon \(words)")
                }
            }
        }
    }
}
