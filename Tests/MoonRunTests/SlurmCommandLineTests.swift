import Foundation
import MoonDocument
import MoonGraph
import MoonProcess
import Testing
@testable import MoonRun
import MoonEvents

/// A graph from YAML text, for the Slurm unit tests.
func slurmTestGraph(_ text: String, path: String = "/work/proj/moon.yaml") throws -> Graph {
    let result = GraphLoader.load(SourceFile(path: path, bytes: Array(text.utf8)))
    let errors = result.diagnostics.filter { $0.severity == .error }
    try #require(errors.isEmpty, "\(errors)")
    return try #require(result.graph)
}

@Suite struct SlurmCommandLineTests {
    @Test func srunRunsTheCommandAsAJobStepWithTheNodesNameDirectoryAndResources() {
        let options = SlurmOptions(partition: "debug", cpusPerTask: 2, mem: "4G", time: "30", account: "lab", args: ["--qos=short"])
        let arguments = SlurmCommandLine.srunArguments(options: options, jobName: "moon.release.build", directory: "/work/app",
                                                       command: ["/bin/sh", "-e", "-c", "make -j2"])
        #expect(arguments == [
            "--verbose", "--job-name=moon.release.build", "--chdir=/work/app", "--export=ALL",
            "--partition=debug", "--cpus-per-task=2", "--mem=4G", "--time=30", "--account=lab", "--qos=short",
            "--", "/bin/sh", "-e", "-c", "make -j2",
        ])
    }

    @Test func withoutOptionsOnlyTheStepItselfIsDescribed() {
        let arguments = SlurmCommandLine.srunArguments(options: SlurmOptions(), jobName: "moon.g.n", directory: "/d", command: ["true"])
        #expect(arguments == ["--verbose", "--job-name=moon.g.n", "--chdir=/d", "--export=ALL", "--", "true"])
    }

    @Test func jobNamesAreOneWordOfPrintableASCII() {
        #expect(SlurmCommandLine.jobName(graph: "release", node: "build.x+y-z") == "moon.release.build.x+y-z")
        #expect(SlurmCommandLine.jobName(graph: "my graph,ü", node: "n") == "moon.my_graph__.n")
    }

    @Test func aNodesOptionsOverrideItsQueuesAndAppendArguments() throws {
        let graph = try slurmTestGraph("""
            version: 1
            queues:
              cluster:
                executor: slurm
                slurm: { partition: debug, cpus-per-task: 2, mem: 4G, args: [--qos=short] }
            nodes:
              big:
                queue: cluster
                run: ./train
                slurm: { cpus-per-task: 8, args: [--exclusive] }
              local:
                run: echo hi
            """)
        let big = try #require(graph.slurmOptions(for: graph.nodes[0]))
        #expect(SlurmCommandLine.resourceArguments(big) == ["--partition=debug", "--cpus-per-task=8", "--mem=4G", "--qos=short", "--exclusive"])
        #expect(graph.slurmOptions(for: graph.nodes[1]) == nil)
    }
}

@Suite struct SlurmStepTests {
    func step() -> SlurmStep { SlurmStep(options: SlurmOptions(), graph: "g", node: "n", queue: "cluster", programs: ProgramCache()) }

    @Test func readsTheJobIdAndHidesSrunsChatter() {
        let step = step()
        // What `srun --verbose` wrote on the one-node test cluster (Slurm 22.05).
        let lines: [(String, SlurmStep.Line)] = [
            ("srun: defined options", .drop),
            ("srun: -------------------- --------------------", .drop),
            ("srun: job-name            : moon.t.a", .drop),
            ("srun: end of defined options", .drop),
            ("srun: jobid 4: nodes(1):`localhost', cpu counts: 1(x1)", .job("4", keep: false)),
            ("srun: launch/slurm: launch_p_step_launch: CpuBindType=(null type)", .drop),
            ("srun: launching StepId=4.0 on host localhost, 1 tasks: 0", .drop),
            ("the task's own line", .keep),
            ("srun: launch/slurm: _task_finish: Received task exit notification for 1 task of StepId=4.0 (status=0x0300).", .drop),
            ("srun: error: localhost: task 0: Exited with exit code 3", .drop),
            ("slurmstepd-localhost: error: *** STEP 6.0 ON localhost CANCELLED AT 2026-11-22T04:00:28 ***", .drop),
            ("srun: warning: something worth knowing", .keep),
        ]
        for (line, expected) in lines { #expect(step.read(line) == expected, "\(line)") }
        #expect(step.jobID == "4")
        #expect(step.termination(for: .exited(3), canceled: false) == .success(.exited(3)))
    }

    @Test func aQueuedJobIsNamedAtOnceAndTheLineShown() {
        let step = step()
        #expect(step.read("srun: job 8 queued and waiting for resources") == .job("8", keep: false))
        #expect(step.read("srun: jobid 8: nodes(1):`localhost', cpu counts: 1(x1)") == .drop)
        #expect(step.jobID == "8")
    }

    @Test func theTasksWaitStatusDecidesHowTheNodeEnded() {
        let killed = step()
        _ = killed.read("srun: launch/slurm: _task_finish: Received task exit notification for 1 task of StepId=10.0 (status=0x000b).")
        #expect(killed.termination(for: .exited(139), canceled: false) == .success(.signaled(11)))
        let ok = step()
        _ = ok.read("srun: jobid 3: nodes(1):`localhost', cpu counts: 1(x1)")
        #expect(ok.termination(for: .exited(0), canceled: false) == .success(.exited(0)))
    }

    @Test func srunFailingBeforeThereIsAJobIsASpawnErrorWithSrunsReason() {
        let step = step()
        #expect(step.read("srun: error: Unable to allocate resources: Unable to contact slurm controller (connect failure)") == .keep)
        guard case .failure(let error) = step.termination(for: .exited(1), canceled: false) else {
            Issue.record("expected a spawn error")
            return
        }
        #expect(error.kind == .spawn)
        #expect(error.message == "cannot run node 'n' on Slurm (queue 'cluster'): Unable to allocate resources: Unable to contact slurm controller (connect failure)")
        // Cancelled before allocation: moon stopped it, not Slurm's fault.
        #expect(step.termination(for: .exited(1), canceled: true) == .success(.exited(1)))
    }

    @Test func srunMissingFromPathIsASpawnErrorNamingIt() throws {
        let step = step()
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("moon-no-srun-\(UUID().uuidString)").path
        let spec = ProcessSpec(executable: "/bin/true", environment: ["PATH": empty], workingDirectory: "/")
        #expect {
            try step.wrap(spec)
        } throws: { error in
            guard let error = error as? NodeError else { return false }
            return error.kind == .spawn && error.message.contains("srun was not found on PATH (\(empty))")
        }
    }

    @Test func wrapRunsSrunWithTheNodesEnvironmentButNotAnEnclosingAllocation() throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("moon-fake-srun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bin) }
        let srun = bin.appendingPathComponent("srun").path
        _ = FileManager.default.createFile(atPath: srun, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        let step = SlurmStep(options: SlurmOptions(mem: "1G"), graph: "g", node: "n", queue: "cluster", programs: ProgramCache())
        let spec = ProcessSpec(executable: "/bin/echo", arguments: ["hi"],
                               environment: ["PATH": bin.path, "A": "1", "SLURM_JOB_ID": "99", "SLURM_JOBID": "99"],
                               workingDirectory: "/tmp")
        let wrapped = try step.wrap(spec)
        #expect(wrapped.executable == srun)
        #expect(wrapped.arguments == ["--verbose", "--job-name=moon.g.n", "--chdir=/tmp", "--export=ALL", "--mem=1G", "--", "/bin/echo", "hi"])
        #expect(wrapped.environment == ["PATH": bin.path, "A": "1"])
        #expect(wrapped.workingDirectory == "/tmp")
    }
}

/// What srun asks for (declared, else learned) and the task reporter's
/// command and file (`SlurmTask`).
@Suite struct SlurmRequestTests {
    @Test func declaredValuesWinOverLearnedOnes() throws {
        let graph = try slurmTestGraph("""
            version: 1
            queues:
              cluster: { executor: slurm }
            defaults: { queue: cluster }
            nodes:
              free: { run: ./a }
              declares: { run: ./b, resources: { memory: 50M }, timeout: 2m }
              own: { run: ./c, slurm: { mem: 1G, time: "30" } }
            """)
        let learned = SlurmExport.Learned(memory: ["free": 200 << 20, "declares": 200 << 20, "own": 200 << 20],
                                          time: ["free": .seconds(600), "declares": .seconds(600), "own": .seconds(600)])
        func asked(_ index: Int) throws -> [String] {
            let node = graph.nodes[index]
            return SlurmCommandLine.resourceArguments(learned.requesting(try #require(graph.slurmOptions(for: node)), node: node.name))
        }
        #expect(try asked(0) == ["--mem=200M", "--time=00:10:00"])
        // resources: and timeout: (and a minute) are declarations too.
        #expect(try asked(1) == ["--mem=50M", "--time=00:03:00"])
        #expect(try asked(2) == ["--mem=1G", "--time=30"])
        // Nothing learned: only what is declared.
        let none = SlurmExport.Learned()
        #expect(SlurmCommandLine.resourceArguments(none.requesting(try #require(graph.slurmOptions(for: graph.nodes[0])), node: "free")) == [])
    }

    @Test func withAReporterSrunRunsTheCommandUnderIt() throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("moon-fake-srun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bin) }
        _ = FileManager.default.createFile(atPath: bin.appendingPathComponent("srun").path, contents: Data("#!/bin/sh\n".utf8),
                                           attributes: [.posixPermissions: 0o755])
        let step = SlurmStep(options: SlurmOptions(), graph: "g", node: "n", queue: "cluster", programs: ProgramCache(),
                             reporter: SlurmTask.Reporter(path: "/opt/moon", identity: "5:7"), usageFile: "/tmp/out/node-0.1.usage")
        let wrapped = try step.wrap(ProcessSpec(executable: "/bin/echo", arguments: ["hi"], environment: ["PATH": bin.path], workingDirectory: "/tmp"))
        #expect(Array(wrapped.arguments.suffix(12)) == ["--", "/bin/sh", "-c", SlurmTask.script, "sh",
                                                        "/opt/moon", "5:7", "--slurm-task", "/tmp/out/node-0.1.usage", "--", "/bin/echo", "hi"])
    }

    /// Where moon's binary is not on the compute node, or another file is
    /// at its path (another version), the command runs as it is, and reports nothing.
    @Test(arguments: [SlurmTask.Reporter(path: "/nonexistent/moon", identity: "1:2"), SlurmTask.Reporter(path: "/bin/sh", identity: "1:2")])
    func withoutTheSameReporterOnTheComputeNodeTheCommandRunsDirectly(reporter: SlurmTask.Reporter) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("moon-usage-\(UUID().uuidString)").path
        let command = SlurmTask.srunCommand(reporter: reporter, usageFile: file, command: ["sh", "-c", "echo \"ok $0\"; exit 4", "a b"])
        let (output, status) = try Self.run(command)
        #expect(output == "ok a b\n")
        #expect(status == 4)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    /// The same file at moon's path (size and modification time): it runs the command.
    @Test func theSameReporterRunsTheCommand() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-reporter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fake = directory + "/moon"
        _ = FileManager.default.createFile(atPath: fake, contents: Data("#!/bin/sh\nprintf '[%s]' \"$@\"\n".utf8), attributes: [.posixPermissions: 0o755])
        let info = try FileManager.default.attributesOfItem(atPath: fake)
        let size = try #require(info[.size] as? Int), modified = try #require(info[.modificationDate] as? Date)
        let reporter = SlurmTask.Reporter(path: fake, identity: "\(size):\(Int(modified.timeIntervalSince1970))")
        let command = SlurmTask.srunCommand(reporter: reporter, usageFile: "/u f", command: ["echo", "a b"])
        #expect(try Self.run(command).output == "[--slurm-task][/u f][--][echo][a b]")
    }

    /// Runs the words srun would run, here: what they print and how they end.
    static func run(_ command: [String]) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (output, process.terminationStatus)
    }

    @Test func theUsageFileIsOneStrictLine() {
        #expect(SlurmTask.decode("moon-slurm-usage 1 1500 20 104857600\n")
                == ProcessUsage(userMicroseconds: 1500, systemMicroseconds: 20, maxResidentBytes: 104_857_600))
        #expect(SlurmTask.decode(SlurmTask.encode(ProcessUsage(userMicroseconds: 1, systemMicroseconds: 2, maxResidentBytes: 3)))
                == ProcessUsage(userMicroseconds: 1, systemMicroseconds: 2, maxResidentBytes: 3))
        for bad in ["", "moon-slurm-usage 1 1 2 3", "moon-slurm-usage 1 1 2 3\n\n", "moon-slurm-usage 1 1 2 3 4\n",
                    "moon-slurm-usage 1 -1 2 3\n", "moon-slurm-usage 1 1  3\n", "moon-slurm-usage 2 1 2 3\n",
                    "moon-slurm-usage 1 1 2 9999999999999999999\n", "moon-slurm-usage 1 1 2 ３\n", "0 0 999999999999\n"] {
            #expect(SlurmTask.decode(bad) == nil, "\(bad)")
        }
    }

    /// Only a small regular file is read (never through a link, never a FIFO that would block), and it is removed.
    @Test func onlyASmallRegularFileIsTaken() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-usage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = directory + "/good", link = directory + "/link", fifo = directory + "/fifo", big = directory + "/big"
        try "moon-slurm-usage 1 1 2 3\n".write(toFile: good, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
        #expect(mkfifo(fifo, 0o600) == 0)
        try String(repeating: "moon-slurm-usage 1 1 2 3\n", count: 10).write(toFile: big, atomically: false, encoding: .utf8)
        #expect(SlurmTask.take(link) == nil)
        #expect(SlurmTask.take(fifo) == nil)
        #expect(SlurmTask.take(big) == nil)
        #expect(SlurmTask.take(good) == ProcessUsage(userMicroseconds: 1, systemMicroseconds: 2, maxResidentBytes: 3))
        #expect(SlurmTask.take(good) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
}
