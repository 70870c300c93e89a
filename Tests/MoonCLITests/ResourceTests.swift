import Foundation
import MoonEvents
import Testing

/// `resources:` and `--memory` on the built binary: real processes, admitted
/// by the memory they declare (docs/scheduling.md).
@Suite struct ResourceTests {
    /// Four nodes of 300M each on a queue wide enough for all of them.
    static let fourOf300 = """
        version: 1
        queues:
          wide: {concurrency: 8}
        defaults:
          queue: wide
          resources: {memory: 300M}
        nodes:
          a: {run: sleep 0.4}
          b: {run: sleep 0.4}
          c: {run: sleep 0.4}
          d: {run: sleep 0.4}
        """

    /// The most nodes that ran at once, from the `start` and `complete` events' times.
    static func mostAtOnce(_ events: [RunEvent]) -> Int {
        var marks: [(time: Date, delta: Int)] = []
        for event in events {
            switch event.kind {
            case .start: marks.append((event.time, 1))
            case .complete, .error: marks.append((event.time, -1))
            default: break
            }
        }
        // An end and a start at the same instant: the end first.
        marks.sort { $0.time != $1.time ? $0.time < $1.time : $0.delta < $1.delta }
        var running = 0, most = 0
        for mark in marks {
            running += mark.delta
            most = max(most, running)
        }
        return most
    }

    @Test func nodesRunOnlyWhileTheirMemoryFitsTheBudget() throws {
        let moon = try Moon(graph: Self.fourOf300)
        // 3 × 300M is exactly 900M: three fit, never four.
        let exact = try moon.run(["--json", "--memory", "900M"])
        #expect(exact.status == 0, "\(exact.stderr)")
        #expect(Self.mostAtOnce(exact.events) <= 3)
        // Under 900M, never three at once.
        let less = try moon.run(["--json", "--memory", "899M"])
        #expect(less.status == 0, "\(less.stderr)")
        #expect(Self.mostAtOnce(less.events) == 2)
        // MOON_MEMORY says the same when --memory is not given.
        let env = try moon.run(["--json"], environment: ["MOON_MEMORY": "600M"])
        #expect(env.status == 0, "\(env.stderr)")
        #expect(Self.mostAtOnce(env.events) == 2)
        // Without a budget that binds, all four run at once.
        let roomy = try moon.run(["--json", "--memory", "4G"])
        #expect(Self.mostAtOnce(roomy.events) == 4)
    }

    /// Nodes that declare nothing are admitted, from their second run on,
    /// with what their last runs used (+20%): four that each touch 200 MiB
    /// never run three at once under 600M once they have run.
    @Test func nodesThatDeclareNothingAreAdmittedWithWhatTheyUsed() throws {
        let touch = "python3 -c 'import time; b = bytearray(200 << 20); b[::4096] = bytes(len(b[::4096])); time.sleep(0.4)'"
        let moon = try Moon(graph: """
            version: 1
            queues:
              wide: {concurrency: 8}
            defaults:
              queue: wide
            nodes:
              a: {run: "\(touch)"}
              b: {run: "\(touch)"}
              c: {run: "\(touch)"}
              d: {run: "\(touch)"}
            """)
        // Nothing learned yet: all four at once, whatever the budget.
        let first = try moon.run(["--json", "--memory", "600M"], limit: 60)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Self.mostAtOnce(first.events) == 4)
        let listed = try moon.run(["list", "--resources"])
        #expect(listed.stdout.contains("learned"), "\(listed.stdout)")
        // Learned (each ~240 MiB): two fit in 600M, three do not.
        let second = try moon.run(["--json", "--force", "--memory", "600M"], limit: 60)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Self.mostAtOnce(second.events) == 2)
        // Larger than the whole budget: each runs alone, with one warning each.
        let small = try moon.run(["--json", "--force", "--memory", "100M"], limit: 60)
        #expect(small.status == 0, "\(small.stderr)")
        #expect(Self.mostAtOnce(small.events) == 1)
    }

    @Test func aNodeLargerThanTheBudgetRunsAloneWithOneWarning() throws {
        let moon = try Moon(graph: """
            version: 1
            queues:
              wide: {concurrency: 8}
            defaults:
              queue: wide
            nodes:
              big:
                run: sleep 0.3
                resources: {memory: 2G}
                priority: 5
              small1: {run: sleep 0.3, resources: {memory: 100M}}
              small2: {run: sleep 0.3, resources: {memory: 100M}}
            """)
        let result = try moon.run(["--json", "--memory", "1G"], limit: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "needs 2 GiB of memory, more than the run's budget of 1 GiB; it runs alone").count == 2,
                "one warning: \(result.stderr)")
        let bigEnd = try #require(result.events("complete", node: "big").first?.time)
        for small in ["small1", "small2"] {
            let start = try #require(result.events("start", node: small).first?.time)
            #expect(start >= bigEnd, "\(small) started beside the node larger than the budget")
        }
    }

    @Test func cpusTakeSlotsOfJobs() throws {
        let moon = try Moon(graph: """
            version: 1
            queues:
              wide: {concurrency: 8}
            defaults:
              queue: wide
              resources: {cpus: 2}
            nodes:
              a: {run: sleep 0.3}
              b: {run: sleep 0.3}
              c: {run: sleep 0.3, resources: {cpus: 1}}
              d: {run: sleep 0.3, resources: {cpus: 1}}
            """)
        let result = try moon.run(["--json", "-j", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.events
        // Each of a and b holds both slots: neither runs beside anything.
        for wide in ["a", "b"] {
            let start = try #require(result.events("start", node: wide).first?.time)
            let end = try #require(result.events("complete", node: wide).first?.time)
            let others = events.filter { if case .start(let n, _, _, _, _) = $0.kind { return n != wide }; return false }
            #expect(!others.contains { $0.time > start && $0.time < end }, "a node started beside \(wide)")
        }
    }

    @Test func badResourcesNameTheirPlace() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults:
              resources: {memory: 0M}
            nodes:
              a:
                run: "true"
                resources: {memory: 512, cpus: 0}
              b:
                run: "true"
                resources: {memory: lots, threads: 2}
              c:
                run: "true"
                resources: {memory: 1Gb}
              d: {run: "true", resources: {memory: 99999999999G}}
              e: {run: "true", resources: {memory: 1.5.G}}
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:3:23: error: invalid memory '0M'"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:7:25: error: invalid memory '512'; write a size with its unit, like 512M, 2G or 1.5GiB"))
        #expect(result.stderr.contains("moon.yaml:7:36: error: invalid cpus '0'"))
        #expect(result.stderr.contains("moon.yaml:10:25: error: invalid memory 'lots'"))
        #expect(result.stderr.contains("moon.yaml:10:31: error: unknown key 'threads' in resources (did you mean 'cpus'?)"))
        // Bits, sizes past 64 bits and stray points are refused at their place, never read loosely nor trapped on.
        #expect(result.stderr.contains("moon.yaml:13:25: error: invalid memory '1Gb' (a lower-case b means bits); write a size with its unit, like 512M, 2G or 1.5GiB"),
                "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:14:40: error: invalid memory '99999999999G'"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:15:40: error: invalid memory '1.5.G'"), "\(result.stderr)")
        let option = try moon.run(["--memory", "900", "a"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("--memory: '900' is not a memory size; write one with its unit"), "\(option.stderr)")
        let bits = try moon.run(["--memory", "8Gb", "a"])
        #expect(bits.status == 2)
        #expect(bits.stderr.contains("--memory: '8Gb' is not a memory size (a lower-case b means bits); write one with its unit"), "\(bits.stderr)")
    }

    /// A bad `MOON_MEMORY` (set once in a profile) fails no run: a run that
    /// needs no budget says nothing, one that does warns once and uses the
    /// memory available. A bad `--memory` stays a usage error.
    @Test func aBadMoonMemoryWarnsOnlyWhenTheBudgetIsUsed() throws {
        let plain = try Moon(graph: """
            version: 1
            nodes:
              a: {run: "true"}
            """)
        let quiet = try plain.run(["run"], environment: ["MOON_MEMORY": "lots"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect((quiet.stdout + quiet.stderr).contains("1 succeeded"), "it ran: \(quiet.stdout)\(quiet.stderr)")
        #expect(!quiet.stderr.contains("MOON_MEMORY"), "\(quiet.stderr)")
        let sized = try Moon(graph: Self.fourOf300)
        let warned = try sized.run(["--json"], environment: ["MOON_MEMORY": "lots"])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.components(separatedBy: "MOON_MEMORY: 'lots' is not a memory size; write one with its unit, like 900M, 2G or 1.5GiB; "
                + "the budget is the memory available now").count == 2, "one warning: \(warned.stderr)")
        let option = try sized.run(["--memory", "lots"], environment: ["MOON_MEMORY": "2G"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("--memory: 'lots' is not a memory size"), "\(option.stderr)")
    }

    @Test func listShowsDeclaredResources() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults:
              resources: {memory: 1G}
            nodes:
              build: {run: "true", resources: {cpus: 4}}
              test: {run: "true", resources: {memory: 300M}}
            """)
        let result = try moon.run(["list", "--resources"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines == ["NODE MEMORY CPUS", "build 1 GiB declared 4 declared", "test 300 MiB declared 1"], "\(result.stdout)")
    }

    /// A real OOM kill: the node moves itself into a memory cgroup (v1) of
    /// 32M and allocates 256M. Needs root and a writable memory controller
    /// (as CI has); elsewhere there is nothing to test. The verdict without
    /// a cgroup of the node's own (`MOON_CGROUP=off`): the system's count
    /// (CgroupTests has the node's own).
    @Test func aNodeTheKernelKilledForMemoryIsReportedAsOutOfMemory() throws {
        let group = "/sys/fs/cgroup/memory/moon-test-oom-\(getpid())"
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), mkdir(group, 0o755) == 0 else { return }
        defer { _ = eventually(10) { rmdir(group) == 0 } }
        guard (try? "32M".write(toFile: group + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)) != nil else { return }
        let moon = try Moon(graph: """
            version: 1
            nodes:
              hog:
                run: echo $$ > \(group)/cgroup.procs && exec python3 -c 'b = bytearray(256 << 20); print(len(b))'
                resources: {memory: 100M}
            """)
        let result = try moon.run(["--json", "--memory", "1G"], environment: ["MOON_CGROUP": "off"], limit: 60)
        #expect(result.status == 1)
        let message = result.error(of: "hog")?.message ?? ""
        #expect(message.hasPrefix("killed by SIGKILL: out of memory (the kernel's OOM killer ran while it ran; it was admitted with 100 MiB"),
                "\(message) \(result.stderr)")
    }

    /// A real OOM kill, retried: the node's first attempt moves itself into
    /// a memory cgroup (v1) of 32M and allocates 256M; its retry waits until
    /// the nodes running beside it ended, runs alone with the whole budget,
    /// and the others start only after it. Needs root and a writable memory
    /// controller (as CI has); elsewhere there is nothing to test.
    @Test func aRetryAfterAnOOMKillRunsAloneWithTheWholeBudget() throws {
        let group = "/sys/fs/cgroup/memory/moon-test-oom-retry-\(getpid())"
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), mkdir(group, 0o755) == 0 else { return }
        defer { _ = eventually(10) { rmdir(group) == 0 } }
        guard (try? "32M".write(toFile: group + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)) != nil else { return }
        // hog and s1, s2 fill the 1000M; what hog gives back when killed would let s3 start: it must not.
        let moon = try Moon(graph: """
            version: 1
            queues:
              wide: {concurrency: 8}
            defaults:
              queue: wide
              resources: {memory: 300M}
            nodes:
              hog:
                run: |
                  if [ "$MOON_ATTEMPT" = 1 ]; then
                    echo $$ > \(group)/cgroup.procs && exec python3 -c 'b = bytearray(256 << 20); print(len(b))'
                  fi
                  sleep 0.5
                retry: 1
                priority: 9
              s1: {run: sleep 2, priority: 5}
              s2: {run: sleep 2, priority: 5}
              s3: {run: sleep 0.2}
              s4: {run: sleep 0.2}
            """)
        // The node moves itself into a test cgroup: the system's count tells (MOON_CGROUP=off).
        let result = try moon.run(["--json", "--memory", "1000M"], environment: ["MOON_CGROUP": "off"], limit: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.events
        let retry = events.compactMap { event -> String? in
            if case .retry(_, _, _, let error) = event.kind { return error.message }
            return nil
        }
        #expect(retry.count == 1)
        #expect(retry.first?.contains("out of memory") == true && retry.first?.contains("it retries alone with the whole budget of 1000 MiB") == true,
                "\(retry)")
        // In the stream's order (the runner's own): the retry's start, then its end.
        func index(_ name: String, _ node: String, _ nth: Int = 0) -> Int? {
            events.indices.filter { events[$0].name == name && events[$0].node == node }.dropFirst(nth).first
        }
        let retryStart = try #require(index("start", "hog", 1))
        let retryEnd = try #require(index("complete", "hog"))
        for other in ["s1", "s2", "s3", "s4"] {
            let start = try #require(index("start", other))
            let end = try #require(index("complete", other))
            #expect(start < retryStart ? end < retryStart : start > retryEnd, "\(other) ran beside the retry")
        }
        // Killed while s1 ran (as it is unless the host is very slow): s3, which would fit in what hog gave back, waited.
        let killed = try #require(events.firstIndex { $0.name == "retry" })
        if killed < (index("complete", "s1") ?? 0) {
            #expect(try #require(index("start", "s3")) > retryEnd, "s3 waited for the retry")
        }
    }
}
