import Foundation
import MoonEvents
import Testing

/// The local Slurm cluster that `scripts/slurm/start-slurm.sh` brings up.
enum SlurmCluster {
    /// Runs `command` with `sh -c`; its status and stdout.
    @discardableResult
    static func shell(_ command: String, directory: String? = nil) -> (status: Int32, out: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return (127, "") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static let hasSrun = shell("command -v srun && command -v sinfo").status == 0

    /// srun is installed and the controller answers with a usable node.
    static let isUp: Bool = {
        guard hasSrun else { return false }
        let state = shell("timeout 5 sinfo -h -o %T").out
        return ["idle", "mixed", "allocated"].contains { state.contains($0) }
    }()

    static let reason = "needs a running Slurm cluster (srun and sinfo answering); start one with: sudo scripts/slurm/start-slurm.sh"

    /// Names of this graph's jobs still queued or running.
    static func jobs(of graph: String) -> [String] {
        shell("squeue -h -o %j").out.split(separator: "\n").map(String.init).filter { $0.hasPrefix("moon.\(graph).") }
    }

    /// `squeue` holds none of the graph's jobs. A cancelled job stays listed
    /// as completing while Slurm ends it: a task that ignores SIGTERM, whose
    /// srun moon had to kill, gets SIGKILL from Slurm after the cluster's
    /// `KillWait` (5 s here), and the controller's bookkeeping follows (on a
    /// host loaded by the rest of the suite, late).
    static func leftNothing(_ graph: String) -> Bool {
        eventually(30) { jobs(of: graph).isEmpty }
    }

    /// A graph name of its own for each test, so tests can tell their jobs apart.
    static func uniqueName(_ base: String) -> String {
        base + "-" + String(UUID().uuidString.prefix(8)).lowercased()
    }

    /// A graph of a name of its own (`base` and a suffix) whose queue
    /// `cluster` (settings `cluster`) runs on Slurm; `body` follows it (its
    /// `nodes:` and the rest) at the top level.
    static func project(_ base: String, cluster: String = "{ executor: slurm }", _ body: String) throws -> (name: String, moon: Moon) {
        let name = uniqueName(base)
        return (name, try Moon(graph: "version: 1\nname: \(name)\nqueues:\n  cluster: \(cluster)\n" + body))
    }
}

/// End-to-end: the real binary runs nodes of Slurm queues on the local
/// cluster (scripts/slurm/start-slurm.sh). Skipped, with the reason, where
/// there is no cluster.
@Suite(.serialized, .enabled(if: SlurmCluster.isUp, Comment(rawValue: SlurmCluster.reason)))
struct SlurmClusterTests {
    @Test func localAndSlurmNodesNeedEachOtherAndPassOutputs() throws {
        let (name, moon) = try SlurmCluster.project("mixed", cluster: "{ executor: slurm, concurrency: 4, slurm: { partition: debug, mem: 100M } }", """
            nodes:
              prepare:
                run: echo "n=41" >> "$MOON_OUTPUT"
              compute:
                needs: prepare
                queue: cluster
                env: { N: "${{ needs.prepare.outputs.n }}" }
                run: |
                  echo "job=$SLURM_JOB_ID name=$SLURM_JOB_NAME dir=$PWD"
                  echo "to stderr" >&2
                  echo "m=$((N + 1))" >> "$MOON_OUTPUT"
              execform:
                queue: cluster
                dir: sub
                run: [sh, -c, 'echo "exec in $(basename "$PWD")"']
              builtin:
                queue: cluster
                uses: sleep
                with: { duration: 300ms }
              report:
                needs: [compute, execform, builtin]
                run: echo "m=${{ needs.compute.outputs.m }}"
            """)
        try moon.makeDirectory("sub")
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")

        let jobID = try #require(result.events("start", node: "compute").first?.jobID)
        #expect(result.events("start", node: "execform").first?.jobID != nil)
        #expect(result.events("start", node: "prepare").first?.jobID == nil)
        #expect(result.events("start", node: "builtin").first?.jobID == nil)
        // A built-in on a Slurm queue runs in moon and starts at once, not when it ends.
        let events = result.events
        func index(_ name: String, _ node: String) -> Int? { events.firstIndex { $0.name == name && $0.node == node } }
        let builtinStart = index("start", "builtin"), builtinEnd = index("complete", "builtin"), prepareEnd = index("complete", "prepare")
        #expect(try #require(builtinStart) < #require(prepareEnd))
        #expect(try #require(builtinStart) < #require(builtinEnd))
        let lines = result.events("next", node: "compute").compactMap { $0.text }
        // stdout and stderr come through srun on two streams: their order is not kept.
        #expect(lines.sorted() == ["job=\(jobID) name=moon.\(name).compute dir=\(moon.directory.path)", "to stderr"].sorted())
        #expect(result.events("next", node: "execform").first?.text == "exec in sub")
        #expect(result.events("complete", node: "compute").first?.outputs == ["m": "42"])
        #expect(result.events("next", node: "report").first?.text == "m=42")
        // srun's own lines (--verbose) never reach the events.
        #expect(!result.stdout.contains("srun: "))
        #expect(SlurmCluster.shell("scontrol show job -o \(jobID)").out.contains("JobName=moon.\(name).compute"))
        #expect(SlurmCluster.leftNothing(name))
    }

    @Test func aFailingSlurmNodeSkipsItsDependents() throws {
        let (name, moon) = try SlurmCluster.project("fails", """
            defaults: { queue: cluster }
            nodes:
              bad: { run: echo about to fail; exit 3 }
              after: { needs: bad, run: echo never }
              local: { needs: bad, queue: default, run: echo never }
              segv: { run: kill -SEGV $$, continue-on-error: true }
            """)
        let result = try moon.run(["run", "--json", "-k"])
        #expect(result.status == 1)
        let error = try #require(result.events("error", node: "bad").first?.error)
        #expect(error.kind == .exit)
        #expect(error.exitCode == 3)
        #expect(result.events("next", node: "bad").compactMap { $0.text } == ["about to fail"])
        #expect(result.events("skip", node: "after").first?.reason == .upstreamFailed)
        #expect(result.events("skip", node: "local").first?.reason == .upstreamFailed)
        let segv = try #require(result.events("error", node: "segv").first?.error)
        #expect(segv.kind == .signal)
        #expect(segv.signal == 11)
        #expect(SlurmCluster.leftNothing(name))
    }

    @Test func aTimeoutCancelsTheJob() throws {
        let (name, moon) = try SlurmCluster.project("timeout", """
            nodes:
              slow: { queue: cluster, run: "sleep 60", timeout: 700ms }
            """)
        let started = Date()
        let result = try moon.run(["run", "--json"], limit: 30)
        #expect(result.status == 1)
        #expect(Date().timeIntervalSince(started) < 10)
        let error = try #require(result.events("error", node: "slow").first?.error)
        #expect(error.kind == .timeout)
        #expect(SlurmCluster.leftNothing(name))
    }

    @Test func ctrlCCancelsRunningAndQueuedJobs() throws {
        // More jobs than the cluster has CPUs: some run, the rest wait in the queue.
        var nodes = "nodes:\n"
        for i in 1...6 { nodes += "  n\(i): { queue: cluster, run: \"trap '' TERM; echo started; sleep 60\" }\n" }
        let (name, moon) = try SlurmCluster.project("ctrlc", cluster: "{ executor: slurm, concurrency: 6 }", nodes)
        let running = try moon.start(["run", "--json", "--grace", "1s"])
        // Ctrl-C once moon has reported every job (its start event carries the
        // job id): squeue lists a job before srun has told moon its id.
        func reported() -> (jobs: Int, started: Bool) {
            let events = running.events
            return (events.filter { $0.jobID != nil }.count, events.contains { $0.text?.contains("started") == true })
        }
        #expect(eventually(15) { reported().jobs == 6 })
        #expect(SlurmCluster.jobs(of: name).count == 6)
        #expect(eventually(15) { reported().started })
        running.signal(SIGINT)
        let result = try running.wait(limit: 20)
        #expect(result.status == 130)
        #expect(result.events("start").count == 6)
        #expect(result.events("start").allSatisfy { $0.jobID != nil })
        #expect(result.events("error").count == 6)
        #expect(result.events("error").allSatisfy { $0.error?.kind == .canceled })
        #expect(SlurmCluster.leftNothing(name), "still queued: \(SlurmCluster.jobs(of: name))")
    }

    @Test func failFastCancelsTheOtherSlurmJobs() throws {
        let (name, moon) = try SlurmCluster.project("failfast", cluster: "{ executor: slurm, concurrency: 4 }", """
            defaults: { queue: cluster }
            nodes:
              sleeper: { run: sleep 60 }
              bad: { run: sleep 0.5; exit 1 }
            """)
        let result = try moon.run(["run", "--json"], limit: 60)
        #expect(result.status == 1)
        #expect(result.events("error", node: "sleeper").first?.error?.kind == .canceled)
        #expect(SlurmCluster.leftNothing(name))
    }

    @Test func theExportedScriptRunsTheGraphOnTheCluster() throws {
        let (name, moon) = try SlurmCluster.project("export", cluster: "{ executor: slurm, slurm: { mem: 50M } }", """
            vars: { who: "world's" }
            defaults: { queue: cluster }
            nodes:
              a: { run: 'echo "hello ${{ vars.who }}" > a.txt' }
              b: { uses: write-file, with: { path: b.txt, content: "from b" } }
              flaky: { run: exit 1, continue-on-error: true }
              c: { needs: [a, b, flaky], run: [sh, -c, 'cat a.txt b.txt > c.txt'] }
              d: { needs: c, uses: exists, with: { path: c.txt } }
              bad: { needs: d, uses: fail, with: { message: "on purpose" } }
              never: { needs: bad, run: touch never.txt }
              cleanup: { needs: never, if: always, run: touch cleanup.txt }
            """)
        let export = try moon.run(["export", "--format", "sbatch", "-o", "submit.sh"])
        #expect(export.status == 0, "\(export.stderr)")
        let submit = SlurmCluster.shell("sh submit.sh", directory: moon.directory.path)
        #expect(submit.status == 0)
        let ids = Dictionary(uniqueKeysWithValues: submit.out.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: " ")
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        })
        #expect(ids.count == 8)
        // Each dependency level takes about a second of the scheduler's loop.
        #expect(eventually(60) { SlurmCluster.jobs(of: name).isEmpty }, "still queued: \(SlurmCluster.jobs(of: name))")
        #expect(moon.read("c.txt") == "hello world's\nfrom b")
        #expect(FileManager.default.fileExists(atPath: moon.path("cleanup.txt")))
        #expect(!FileManager.default.fileExists(atPath: moon.path("never.txt")))
        func state(_ node: String) -> String {
            let line = SlurmCluster.shell("scontrol show job -o \(ids[node] ?? "none")").out
            return line.split(separator: " ").first { $0.hasPrefix("JobState=") }.map { String($0.dropFirst(9)) } ?? "?"
        }
        #expect(state("c") == "COMPLETED")
        #expect(state("bad") == "FAILED")
        #expect(state("never") == "CANCELLED")
        #expect(state("cleanup") == "COMPLETED")
        #expect(moon.read("moon-slurm-logs/bad.\(ids["bad"] ?? "").out") == "on purpose\n")
    }

    /// A node run once by moon asks Slurm, in the export, for the memory it
    /// used (+20%): the job carries that `--mem`, and runs.
    @Test func theExportAsksForTheMemoryARunLearned() throws {
        let name = SlurmCluster.uniqueName("learned")
        let moon = try Moon(graph: """
            version: 1
            name: \(name)
            nodes:
              big: { run: "python3 -c 'b = bytearray(64 << 20); b[::4096] = bytes(len(b[::4096])); open(\\"big.txt\\", \\"w\\").write(\\"ok\\")'" }
            """)
        let run = try moon.run(["run"])
        #expect(run.status == 0, "\(run.stderr)")
        let export = try moon.run(["export", "--format", "sbatch", "-o", "submit.sh"])
        #expect(export.status == 0, "\(export.stderr)")
        let script = moon.read("submit.sh") ?? ""
        let mem = script.split(separator: " ").first { $0.hasPrefix("--mem=") }.map { String($0.dropFirst(6).dropLast()) }
        let megabytes = mem.flatMap { Int($0) } ?? 0
        #expect(megabytes >= 76, "\(script)")
        #expect(script.contains("--time=00:05:00"))
        try? FileManager.default.removeItem(atPath: moon.path("big.txt"))
        let submit = SlurmCluster.shell("sh submit.sh", directory: moon.directory.path)
        #expect(submit.status == 0)
        #expect(eventually(60) { SlurmCluster.jobs(of: name).isEmpty }, "still queued: \(SlurmCluster.jobs(of: name))")
        #expect(moon.read("big.txt") == "ok")
        let id = submit.out.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let job = SlurmCluster.shell("scontrol show job -o \(id)").out
        #expect(job.contains("MinMemoryNode=\(megabytes)M"), "\(job)")
    }

    /// A node that ran on Slurm reports what its task used on the compute
    /// node (measured by moon's task wrapper, not srun's own usage), the
    /// history keeps it, and the next run's srun asks for the learned
    /// memory (+20%) and time (5 minutes at least); a declared `mem` wins
    /// over the learned one, and Slurm nodes' memory is the cluster's, not
    /// the local `--memory` budget. The task's exit code and signal pass
    /// through the wrapper unchanged.
    @Test func aSlurmNodeRecordsItsUsageAndAsksForWhatItLearned() throws {
        let (name, moon) = try SlurmCluster.project("learn", """
            defaults: { queue: cluster }
            nodes:
              big:
                run: |
                  python3 alloc.py 100
                  scontrol show job -o "$SLURM_JOB_ID" | tr ' ' '\\n' | grep -E '^(TimeLimit|MinMemoryNode)=' | tr '\\n' ' ' >> big.txt
                  echo >> big.txt
              declared:
                slurm: { mem: 30M }
                run: |
                  python3 alloc.py 60
                  scontrol show job -o "$SLURM_JOB_ID" | tr ' ' '\\n' | grep -E '^MinMemoryNode=' >> declared.txt
              forger:
                # Its output looks like a report of usage: it is output, never usage.
                run: 'echo "0 0 999999999999"; echo "moon-usage 0 0 999999999999" >&2; exit 3'
              crash:
                run: 'kill -SEGV $$'
            """)
        try moon.write("alloc.py", UsageTests.alloc)
        let measured = ["MOON_SLURM_USAGE": "1"]
        let first = try moon.run(["run", "--json", "-k"], environment: measured)
        #expect(first.status == 1, "\(first.stdout)\(first.stderr)")
        let end = try #require(first.events("complete", node: "big").first, "\(first.stdout)\(first.stderr)")
        let usage = try #require(end.usage, "no usage for a Slurm node: \(first.stdout)")
        #expect(usage.source == .slurm)
        #expect(usage.maxRSSBytes >= 100 * UsageTests.mib && usage.maxRSSBytes < 400 * UsageTests.mib, "\(usage)")
        #expect(first.error(of: "forger")?.exitCode == 3)
        #expect(try #require(first.events("error", node: "forger").first?.usage).maxRSSBytes < 100 * UsageTests.mib)
        #expect(first.error(of: "crash")?.signal == 11, "\(first.stdout)")
        #expect(moon.read("big.txt")?.contains("MinMemoryNode=0") == true, "\(moon.read("big.txt") ?? "")")

        // The history keeps the Slurm run's usage.
        let history = try moon.run(["history", "--node", "big"])
        let peak = ByteText.mebibytes(of: usage.maxRSSBytes)
        #expect(history.stdout.split(separator: "\n").last?.contains(peak) == true, "\(peak) in \(history.stdout)")

        // Learned: 100 MiB and more, +20%; twice a short run is less than 5 minutes.
        let second = try moon.run(["run", "--json", "-k", "--memory", "64M", "big", "declared"], environment: measured)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(!second.stderr.contains("budget"), "\(second.stderr)")
        let asked = (moon.read("big.txt") ?? "").split(separator: "\n").last.map(String.init) ?? ""
        let megabytes = asked.split(separator: " ").first { $0.hasPrefix("MinMemoryNode=") }
            .flatMap { Int($0.dropFirst("MinMemoryNode=".count).dropLast()) } ?? 0
        #expect(megabytes >= 120 && Int64(megabytes) >= (usage.maxRSSBytes * 6 / 5) >> 20, "\(asked)")
        #expect(asked.contains("TimeLimit=00:05:00"), "\(asked)")
        #expect(moon.read("declared.txt") == "MinMemoryNode=30M\nMinMemoryNode=30M\n")
        #expect(SlurmCluster.leftNothing(name))
    }

    /// An 8-item fan-out is one job array of 8 tasks on the cluster: each
    /// task runs its own instance, and the node that needs them all runs
    /// after the whole array.
    @Test func anExportedFanOutRunsAsOneJobArray() throws {
        let (name, moon) = try SlurmCluster.project("array", cluster: "{ executor: slurm, slurm: { mem: 20M } }", """
            defaults: { queue: cluster }
            nodes:
              part:
                for-each: [a, b, c, d, e, f, g, "h i"]
                run: 'echo "$MOON_NODE ${{ item }}" | tee "part-${{ item }}.txt"'
              all: { needs: part, run: 'cat part-*.txt | sort > all.txt' }
            """)
        let export = try moon.run(["export", "--format", "sbatch", "-o", "submit.sh"])
        #expect(export.status == 0, "\(export.stderr)")
        let script = moon.read("submit.sh") ?? ""
        #expect(script.components(separatedBy: "$(sbatch ").count - 1 == 2)
        #expect(script.contains("--array=0-7"))
        #expect(script.contains("--mem=20M"))
        let submit = SlurmCluster.shell("sh submit.sh", directory: moon.directory.path)
        #expect(submit.status == 0)
        let ids = submit.out.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(ids.count == 9)
        #expect(eventually(60) { SlurmCluster.jobs(of: name).isEmpty }, "still queued: \(SlurmCluster.jobs(of: name))")
        let items: [String] = ["a", "b", "c", "d", "e", "f", "g", "h i"]
        let lines: [String] = items.map { item in "part[" + item + "] " + item }
        let expected: String = lines.sorted().joined(separator: "\n") + "\n"
        #expect(moon.read("all.txt") == expected)
        // One array job: its tasks share the array's id (`JOB_K`).
        let tasks: [[Substring]] = ids.prefix(8).map { $0.split(separator: "_") }
        #expect(Set(tasks.map { $0.first ?? "" }).count == 1)
        let indices: [String] = tasks.map { String($0.last ?? "") }
        #expect(indices == ["0", "1", "2", "3", "4", "5", "6", "7"])
        // Each task's log is named by its id, as the script printed it.
        #expect(moon.read("moon-slurm-logs/part.\(ids[0]).out") == "part[a] a\n")
        #expect(moon.read("moon-slurm-logs/part.\(ids[7]).out") == "part[h i] h i\n")
    }
}

/// What happens without a reachable cluster; needs no running cluster.
@Suite struct SlurmUnavailableTests {
    @Test func srunMissingIsASpawnErrorAndTheRestFollowsTheFailureRules() throws {
        let moon = try Moon(graph: """
            version: 1
            queues:
              cluster: { executor: slurm }
            nodes:
              remote: { queue: cluster, run: echo hi }
              after: { needs: remote, run: echo never }
              local: { run: echo local }
            """)
        // A PATH with a shell but no srun.
        let bin = moon.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/sh", withDestinationPath: "/bin/sh")
        let result = try moon.run(["run", "--json", "-k"], environment: ["PATH": bin])
        #expect(result.status == 1)
        let error = try #require(result.events("error", node: "remote").first?.error)
        #expect(error.kind == .spawn)
        #expect(error.message.contains("srun was not found on PATH"))
        #expect(result.events("skip", node: "after").first?.reason == .upstreamFailed)
        #expect(result.events("complete", node: "local").count == 1)
    }

    @Test(.enabled(if: SlurmCluster.hasSrun, "needs srun installed (the Slurm client); no cluster needed"))
    func anUnreachableControllerIsASpawnErrorNamingIt() throws {
        let moon = try Moon(graph: """
            version: 1
            queues:
              cluster: { executor: slurm }
            nodes:
              remote: { queue: cluster, run: echo hi }
            """)
        // A cluster whose controller would listen on a port where nothing does.
        try moon.write("slurm.conf", """
            ClusterName=nowhere
            SlurmctldHost=localhost
            SlurmctldPort=9
            MessageTimeout=1
            AuthType=auth/munge
            NodeName=localhost CPUs=1 State=UNKNOWN
            PartitionName=debug Nodes=localhost Default=YES State=UP

            """)
        let result = try moon.run(["run", "--json"], environment: ["SLURM_CONF": moon.path("slurm.conf")], limit: 60)
        #expect(result.status == 1)
        let error = try #require(result.events("error", node: "remote").first?.error)
        #expect(error.kind == .spawn, "\(result.stdout)")
        let message = error.message
        #expect(message.hasPrefix("cannot run node 'remote' on Slurm (queue 'cluster'): "), "\(message)")
        #expect(message.contains("controller") || message.contains("munge") || message.contains("Unable"), "\(message)")
    }

    /// moon's task reporter (what srun runs on a compute node) ends as its
    /// command did and writes what the command used, its orphans included.
    @Test func theTaskReporterEndsAsItsCommandAndWritesItsUsage() throws {
        let moon = try Moon(graph: "version: 1\nnodes: {}\n")
        try moon.write("alloc.py", UsageTests.alloc)
        func report(_ command: String) throws -> (status: Int32, usage: String?) {
            let file = moon.path("usage-\(UUID().uuidString)")
            let out = SlurmCluster.shell("'\(Moon.binary)' --slurm-task '\(file)' -- sh -c '\(command)' 2>/dev/null; echo $?",
                                         directory: moon.directory.path).out
            return (Int32(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, try? String(contentsOfFile: file, encoding: .utf8))
        }
        let big = try report("(python3 alloc.py 80 && touch done &); python3 alloc.py 20; while [ ! -f done ]; do sleep 0.05; done; sleep 1; exit 3")
        #expect(big.status == 3)
        let fields = try #require(big.usage?.split(separator: " "), "no usage file")
        #expect(fields.count == 5 && fields[0] == "moon-slurm-usage" && fields[1] == "1")
        // The orphan's 80 MiB count: it re-parented to the reporter, which reaped it.
        #expect((Int64(fields[4].dropLast()) ?? 0) >= 80 << 20, "\(big.usage ?? "")")
        let crashed = try report("kill -SEGV $$")
        #expect(crashed.status == 128 + 11 && crashed.usage != nil)
        #expect(try report("exec /nonexistent/program").status == 127)
        #expect(SlurmCluster.shell("'\(Moon.binary)' --slurm-task").status == 2)
    }

    @Test func whatCannotBeExportedIsRefusedWithExitCode2() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: echo "n=1" >> "$MOON_OUTPUT" }
              b: { needs: a, run: 'echo ${{ needs.a.outputs.n }}' }
              w: { uses: wait-for, with: { path: /tmp/x } }
            """)
        let result = try moon.run(["export", "--format", "sbatch"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("moon: error: cannot export node 'b': ${{ needs.a.outputs.n }} is a value from a need"))
        #expect(result.stderr.contains("moon: error: cannot export node 'w': the built-in 'wait-for'"))
    }
}
