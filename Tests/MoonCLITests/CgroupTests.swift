import Foundation
import MoonEvents
import Testing

/// A node that declares memory runs in a memory cgroup of its own (cgroup
/// v1, under moon's): its peak is the cgroup's (exact, not floored at
/// moon's own size), an OOM kill is that cgroup's (another process's is not
/// blamed on it), and no cgroup is left behind, whether the run ends, is
/// interrupted, or moon is killed (the next moon removes it).
@Suite(.enabled(if: MemoryCgroupHost.writable, "needs a writable cgroup v1 memory controller (root): nodes are measured by rusage here"))
struct CgroupTests {
    static let mib: Int64 = 1 << 20
    static let memoryRoot = MemoryCgroupHost.root

    /// A shell line that writes the node's memory cgroup directory to `file`.
    static func recordCgroup(_ file: String) -> String {
        "echo \(memoryRoot)$(sed -n 's/^[0-9,a-z]*:[a-z,]*memory[a-z,]*://p' /proc/self/cgroup) > \(file)"
    }

    func usage(_ result: Moon.Result, _ node: String) throws -> NodeUsage {
        let end = try #require(result.events.first { ($0.name == "complete" || $0.name == "error") && $0.node == node },
                               "no end of \(node):\n\(result.stdout)\(result.stderr)")
        return try #require(end.usage, "\(node) has no usage:\n\(result.stdout)")
    }

    /// The node's cgroup (as it recorded it in `file`) and moon's directory of them.
    func recorded(_ moon: Moon, _ file: String) throws -> (group: String, base: String) {
        let group = try #require(moon.read(file)?.trimmingCharacters(in: .whitespacesAndNewlines), "the node recorded no cgroup")
        let base = (group as NSString).deletingLastPathComponent
        #expect((base as NSString).lastPathComponent.hasPrefix("moon-"), "\(group)")
        return (group, base)
    }

    @Test func aNodesPeakIsItsCgroupsWithoutMoonsSizeAndABigOneReadsWhole() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              small:
                # dash holds 1 MiB in a variable.
                run: x=$(head -c 1048576 /dev/zero | tr '\\0' x); echo ${#x}
                resources: {memory: 50M}
              big:
                run: python3 -c "b = b'x' * (200 << 20)"
                resources: {memory: 300M}
              plain:
                run: x=$(head -c 1048576 /dev/zero | tr '\\0' x); echo ${#x}
            """)
        let result = try moon.run(["run", "-j", "2", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let small = try usage(result, "small")
        #expect(small.source == .cgroup, "\(small)")
        #expect(small.maxRSSBytes >= 1 * Self.mib && small.maxRSSBytes < 8 * Self.mib, "\(small)")
        let big = try usage(result, "big")
        #expect(big.source == .cgroup && big.maxRSSBytes >= 200 * Self.mib, "\(big)")
        // A node that declares no memory is measured by rusage (no cgroup's cost),
        // whose peak carries moon's own size into the child.
        let plain = try usage(result, "plain")
        #expect(plain.source == .rusage && plain.maxRSSBytes > small.maxRSSBytes, "\(plain) \(small)")

        // MOON_CGROUP=all gives every node one; MOON_CGROUP=off none.
        let all = try moon.run(["run", "--force", "--json", "plain"], environment: ["MOON_CGROUP": "all"])
        let measured = try usage(all, "plain")
        #expect(measured.source == .cgroup && measured.maxRSSBytes < 8 * Self.mib, "\(measured)")
        let off = try moon.run(["run", "--force", "--json", "small"], environment: ["MOON_CGROUP": "off"])
        #expect(try usage(off, "small").source == .rusage)
    }

    /// Two OOM kills at once: the node `hog` limits its own cgroup to 32M
    /// and goes over it; `innocent` starts a process outside itself (in a
    /// cgroup of the test's with a 32M limit) that the OOM killer kills,
    /// then SIGKILLs itself. Only `hog` is out of memory. (The system's
    /// count, the fallback without cgroups, blames both.)
    @Test func anOOMKillOutsideANodeIsNotBlamedOnIt() throws {
        let outside = Self.memoryRoot + "/moon-test-outside-\(getpid())"
        try #require(mkdir(outside, 0o755) == 0, "cannot make \(outside)")
        defer { _ = eventually(10) { rmdir(outside) == 0 } }
        try "32M".write(toFile: outside + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
        let moon = try Moon(graph: """
            version: 1
            nodes:
              hog:
                run: \(Self.recordCgroup("hog.cg")) && echo 32M > $(cat hog.cg)/memory.limit_in_bytes && exec python3 alloc.py
                resources: {memory: 100M}
              innocent:
                run: |
                  sh -c 'echo $$ > \(outside)/cgroup.procs && exec python3 alloc.py' || true
                  kill -9 $$
                resources: {memory: 100M}
            """)
        // 256 MiB, every byte written.
        try moon.write("alloc.py", "b = b'x' * (256 << 20)\n")
        let result = try moon.run(["run", "-k", "-j", "2", "--json", "--memory", "1G"], limit: 60)
        #expect(result.status == 1)
        let hog = result.error(of: "hog")?.message ?? ""
        #expect(hog.hasPrefix("killed by SIGKILL: out of memory"), "\(hog) \(result.stderr)")
        let innocent = result.error(of: "innocent")?.message ?? ""
        #expect(innocent == "killed by SIGKILL", "\(innocent)")
        #expect(try usage(result, "hog").source == .cgroup)

        // Without cgroups the verdict is the system's count, which grew while `innocent` ran.
        let fallback = try moon.run(["run", "--json", "--memory", "1G", "innocent"], environment: ["MOON_CGROUP": "off"], limit: 60)
        #expect(fallback.error(of: "innocent")?.message.hasPrefix("killed by SIGKILL: out of memory") == true,
                "\(fallback.error(of: "innocent")?.message ?? fallback.stderr)")
    }

    @Test func noCgroupIsLeftAfterARunOrAnInterruptedOne() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              quick:
                run: \(Self.recordCgroup("quick.cg")); sh -c 'sleep 0.1 &'
                resources: {memory: 10M}
              slow:
                run: \(Self.recordCgroup("slow.cg")); sleep 30
                resources: {memory: 10M}
            """)
        let result = try moon.run(["run", "--json", "quick"])
        #expect(result.status == 0, "\(result.stderr)")
        let quick = try recorded(moon, "quick.cg")
        #expect(!FileManager.default.fileExists(atPath: quick.group), "\(quick.group)")
        #expect(!FileManager.default.fileExists(atPath: quick.base), "\(quick.base)")

        let running = try moon.start(["run", "slow"])
        #expect(eventually(30) { moon.read("slow.cg") != nil })
        let slow = try recorded(moon, "slow.cg")
        #expect(FileManager.default.fileExists(atPath: slow.group))
        running.signal(SIGINT)
        let interrupted = try running.wait(limit: 30)
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: slow.group), "\(slow.group)")
        #expect(!FileManager.default.fileExists(atPath: slow.base), "\(slow.base)")
    }

    @Test func aKilledMoonsCgroupsAreRemovedByTheNextMoon() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              slow:
                run: \(Self.recordCgroup("slow.cg")); echo ready; sleep 30
                resources: {memory: 10M}
              next:
                run: "true"
                resources: {memory: 10M}
            """)
        let running = try moon.start(["run", "--json", "slow"])
        // Its output is read on the thread that spawned it, once the spawn
        // returned: from then on the node dies with moon.
        #expect(eventually(30) { running.events.contains { $0.name == "next" } })
        let slow = try recorded(moon, "slow.cg")
        running.signal(SIGKILL)
        _ = try running.wait(limit: 30)
        // The node dies with moon (its death pipe); its cgroup stays until another moon looks.
        #expect(eventually(10) { (try? String(contentsOfFile: slow.group + "/tasks", encoding: .utf8))?.isEmpty ?? true })
        let next = try moon.run(["run", "next"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!FileManager.default.fileExists(atPath: slow.group), "\(slow.group)")
        #expect(!FileManager.default.fileExists(atPath: slow.base), "\(slow.base)")
    }
}

/// Whether this host lets moon make memory cgroups (v1, under the test's own, as root).
enum MemoryCgroupHost {
    static let root = "/sys/fs/cgroup/memory"

    /// This process's memory cgroup (moon's children start in the same), where one can be made.
    static let own: String? = {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if fields.count == 3, fields[1].split(separator: ",").contains("memory") {
                return root + (fields[2] == "/" ? "" : String(fields[2]))
            }
        }
        return nil
    }()

    static let writable: Bool = {
        guard let own else { return false }
        let probe = own + "/moon-test-probe-\(getpid())"
        guard mkdir(probe, 0o755) == 0 else { return false }
        rmdir(probe)
        return FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }()
}
