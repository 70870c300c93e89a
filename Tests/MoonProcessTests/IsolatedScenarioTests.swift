import Foundation
import Glibc
import Testing
@testable import MoonProcess
import MoonSystem

/// Scenarios that change the whole process (a lower descriptor limit,
/// `killAll`, becoming a subreaper) run in a child copy of this test binary,
/// so they cannot disturb tests running in parallel. In a normal run each
/// scenario test returns at once; `runInChildProcess` starts the binary
/// again with `MOON_PROCESS_SCENARIO` set to select one.
@Suite struct IsolatedScenarioTests {
    static let variable = "MOON_PROCESS_SCENARIO"

    private static var selected: String? { ProcessInfo.processInfo.environment[variable] }

    @Test(arguments: ["emfile", "emfileWaits", "killAll", "subreaper", "signals", "closedStandardDescriptors", "failedSpawns",
                      "spawner", "usage"])
    func runInChildProcess(scenario: String) async throws {
        guard IsolatedScenarioTests.selected == nil else { return }
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var environment = ProcessSpec.currentEnvironment
        environment[IsolatedScenarioTests.variable] = scenario
        let spec = ProcessSpec(
            executable: binary,
            arguments: ["--testing-library", "swift-testing", "--filter", "IsolatedScenarioTests/\(scenario)Scenario"],
            environment: environment)
        let (recorder, _) = try start(spec)
        let termination = await recorder.termination(timeout: .seconds(60))
        let report = (recorder.texts(.stdout) + recorder.texts(.stderr)).filter { $0.contains("✘") || $0.contains("passed") }
        #expect(termination == .exited(0), "\(report.joined(separator: "\n"))")
        #expect(report.contains { $0.contains("Test run with 1 test") && $0.contains("passed") })
    }

    @Test func emfileScenario() async throws {
        guard IsolatedScenarioTests.selected == "emfile" else { return }
        var original = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &original)
        var lowered = original
        lowered.rlim_cur = 256
        #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &original) }
        // Out of descriptors, launch waits for a child to exit; these sleep,
        // so it gives up after its patience.
        launcher.outOfResourcesPatience = .milliseconds(300)
        defer { launcher.outOfResourcesPatience = .seconds(10) }

        // Four threads start children until the descriptors run out.
        let startedList = LockedList<(Recorder, any ProcessHandle)>()
        let errorList = LockedList<Error>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            while true {
                do {
                    let child = try start(ProcessSpec(executable: "sleep", arguments: ["1000"], environment: testEnvironment))
                    startedList.append(child)
                } catch {
                    errorList.append(error)
                    return
                }
            }
        }
        let started = startedList.all
        let errors = errorList.all
        #expect(errors.count == 4)
        #expect(started.count > 10)
        for error in errors {
            let launchError = try #require(error as? ProcessLaunchError)
            #expect(launchError.kind == .outOfResources)
            #expect(launchError.errno == EMFILE)
            #expect(launchError.message.hasPrefix("cannot run 'sleep': "))
            #expect(launchError.message.contains("Too many open files (moon's limit is 256 open files"))
        }
        started.forEach { $0.1.kill() }
        for (recorder, _) in started {
            #expect(await recorder.termination() == .signaled(SIGKILL))
        }
        // Descriptors are given back: starting works again.
        #expect(try await run(shell("exit 3")).1 == .exited(3))
    }

    /// Out of descriptors while children are running, `launch` waits for
    /// one to exit and tries again: 200 short children from 4 threads, under
    /// a limit that allows about a dozen at once, all start and succeed.
    @Test func emfileWaitsScenario() async throws {
        guard IsolatedScenarioTests.selected == "emfileWaits" else { return }
        var original = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &original)
        var lowered = original
        lowered.rlim_cur = 64
        #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &original) }

        let startedList = LockedList<Recorder>()
        let errorList = LockedList<Error>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<50 {
                do {
                    startedList.append(try start(ProcessSpec(executable: "sleep", arguments: ["0.05"], environment: testEnvironment)).0)
                } catch {
                    errorList.append(error)
                }
            }
        }
        #expect(errorList.all.isEmpty, "\(errorList.all)")
        #expect(startedList.all.count == 200)
        for recorder in startedList.all {
            #expect(await recorder.termination() == .exited(0))
        }
        // With nothing running, waiting cannot help: it fails at once.
        var tiny = original
        tiny.rlim_cur = 8
        #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &tiny) == 0)
        let began = ContinuousClock.now
        #expect(throws: ProcessLaunchError.self) { try start(shell("true")) }
        #expect(ContinuousClock.now - began < .seconds(5), "no waiting when nothing can be reaped")
    }

    @Test func killAllScenario() async throws {
        guard IsolatedScenarioTests.selected == "killAll" else { return }
        let started = try (0..<3).map { _ in try start(shell("sleep 1000")) }
        launcher.killAll()
        launcher.killAll()
        for (recorder, handle) in started {
            #expect(await recorder.termination() == .signaled(SIGKILL))
            handle.terminate(grace: .seconds(1))
        }
    }

    @Test func subreaperScenario() async throws {
        guard IsolatedScenarioTests.selected == "subreaper" else { return }
        try launcher.becomeSubreaper()
        try launcher.becomeSubreaper()

        // A background job left in the group is killed, re-parented to us
        // and reaped: it disappears entirely, not even a zombie remains.
        let (background, _) = try await run(shell("sleep 1000 & echo $!"))
        let sleeper = try #require(background.lines.first.flatMap { pid_t($0.text) })
        #expect(await isGone(sleeper))

        // One that left the group (setsid) survives the node's completion,
        // which comes after the drain window; killAll then kills it as an
        // orphan of moon, and it is reaped.
        let (detached, termination) = try await run(shell(detachedSleepScript))
        #expect(termination == .exited(0))
        let escaped = try #require(detached.lines.first.flatMap { pid_t($0.text) })
        #expect(!isDead(escaped))
        let status = LinuxCalls.readSmallFile("/proc/\(escaped)/status")
        #expect(status.contains("PPid:\t\(getpid())\n"))
        launcher.killAll()
        #expect(await isGone(escaped))

        // A detached shell whose child left its group too: killAll kills
        // the shell and its group, the child is re-parented to moon, and
        // the next turn kills it.
        let (tree, treeEnd) = try await run(shell("setsid sh -c 'setsid sleep 101 & echo $!; sleep 102; true' & sleep 0.3"))
        #expect(treeEnd == .exited(0))
        let child = try #require(tree.lines.first.flatMap { pid_t($0.text) })
        #expect(!isDead(child))
        launcher.killAll()
        #expect(await isGone(child))

        // Spawning still works after the reaper has slept on ECHILD.
        #expect(try await run(shell("exit 7")).1 == .exited(7))
    }

    /// As moon's subreaper, the launcher counts each member of a child's
    /// group that it reaps toward that child: a background job that ends
    /// while the child runs (reaped by the orphan sweep), and one still
    /// running when the child ends (killed and reaped with it); a child
    /// running at the same time gets none of it.
    @Test func usageScenario() async throws {
        guard IsolatedScenarioTests.selected == "usage" else { return }
        try launcher.becomeSubreaper()
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The subshell ends at once: its job is re-parented to us, ends, and is swept while the leader sleeps.
        async let swept = runMeasured(shell("""
            (\(allocating(200)) && touch swept &)
            while [ ! -f swept ]; do sleep 0.02; done
            sleep 0.6
            """, directory: directory))
        async let quiet = runMeasured(shell("sleep 1.5", directory: directory))
        #expect(try await swept.maxResidentBytes >= 200 << 20)
        // (Its peak is at least this test process's own, which the kernel counts in a child until it execs.)
        #expect(try await quiet.maxResidentBytes < 150 << 20, "another group's member is not this child's")
        // Still running when the leader ends: killed with its group, reaped, counted.
        let left = try await runMeasured(shell("""
            (\(allocating(40, then: "open('held', 'w').close(); import time; time.sleep(100)")) &)
            while [ ! -f held ]; do sleep 0.02; done
            """, directory: directory))
        #expect(left.maxResidentBytes >= 40 << 20, "\(left)")
    }

    /// Whatever moon does with signals (ignores SIGPIPE and a real-time
    /// one, handles SIGUSR1, blocks some in the launching thread), a child
    /// starts with every signal at its default and none blocked.
    @Test func signalsScenario() async throws {
        guard IsolatedScenarioTests.selected == "signals" else { return }
        signal(SIGPIPE, SIG_IGN)
        signal(40, SIG_IGN)
        signal(SIGUSR1) { _ in }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGUSR2)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let started = Result { try start(ProcessSpec(executable: "cat", arguments: ["/proc/self/status"], environment: testEnvironment)) }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        let (recorder, _) = try started.get()
        #expect(await recorder.termination() == .exited(0))
        let masks = recorder.texts(.stdout).filter { ["SigBlk:", "SigIgn:", "SigCgt:"].contains($0.prefix(7)) }
        #expect(masks == ["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", "SigCgt:\t0000000000000000"])

        // After the first spawn: a handler installed now, and a signal
        // ignored through `ignoreSignal`, are at their defaults in the child too.
        signal(SIGUSR2) { _ in }
        ProcessLauncher.ignoreSignal(SIGALRM)
        let (again, _) = try start(ProcessSpec(executable: "cat", arguments: ["/proc/self/status"], environment: testEnvironment))
        #expect(await again.termination() == .exited(0))
        let later = again.texts(.stdout).filter { ["SigBlk:", "SigIgn:", "SigCgt:"].contains($0.prefix(7)) }
        #expect(later == ["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", "SigCgt:\t0000000000000000"])
    }

    /// moon started with its standard descriptors closed: its own
    /// descriptors (/dev/null, the pipes) then take numbers 0 to 2, and the
    /// child must still get /dev/null and the two pipes there, inheritable.
    @Test func closedStandardDescriptorsScenario() async throws {
        guard IsolatedScenarioTests.selected == "closedStandardDescriptors" else { return }
        _ = try launcher.eventLoop()  // its descriptors first
        let savedOut = dup(1)
        let savedErr = dup(2)
        let script = "readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2; ls /proc/self/fd; echo err >&2"
        close(0)  // the launcher's /dev/null becomes descriptor 0
        let first = try await run(shell(script))
        close(1)
        close(2)  // the stdout pipe becomes descriptors 1 and 2
        let second = Result { try start(shell(script)) }
        // Restored once the child's pipes are closed (its read ends are 1 and 2).
        let termination = try? await second.get().0.termination()
        dup2(savedOut, 1)
        dup2(savedErr, 2)
        let (recorder, _) = try second.get()
        #expect(termination == .exited(0))
        for result in [first.0, recorder] {
            let out = result.texts(.stdout)
            try #require(out.count == 7, "\(out) \(result.texts(.stderr))")
            #expect(out[0] == "/dev/null")
            #expect(out[1].hasPrefix("pipe:"))
            #expect(out[2].hasPrefix("pipe:"))
            #expect(out[1] != out[2])
            #expect(Array(out[3...]) == ["0", "1", "2", "3"])
            #expect(result.texts(.stderr) == ["err"])
        }
    }

    /// The spawner's promises, after moon set a handler and ignored a
    /// signal: defaults and an empty mask in the child, its own process
    /// group, exit codes, a clear error for a program that cannot run, and
    /// descriptors 0-2 only in the working directory asked for (the
    /// descriptor promises: see `closedStandardDescriptors`).
    @Test func spawnerScenario() async throws {
        guard IsolatedScenarioTests.selected == "spawner" else { return }
        try await spawnerPromisesHold()
        let (fds, _) = try await run(shell("ls /proc/self/fd; pwd", directory: "/tmp"))
        #expect(fds.texts(.stdout) == ["0", "1", "2", "3", "/tmp"])
    }

    private func spawnerPromisesHold() async throws {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGUSR1) { _ in }
        let (status, _) = try start(ProcessSpec(executable: "cat", arguments: ["/proc/self/status"], environment: testEnvironment))
        #expect(await status.termination() == .exited(0))
        let masks = status.texts(.stdout).filter { ["SigBlk:", "SigIgn:", "SigCgt:"].contains($0.prefix(7)) }
        #expect(masks == ["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", "SigCgt:\t0000000000000000"])
        let (group, _) = try await run(shell("ps -o pgid= -p $$; echo $$"))
        let ids = group.texts(.stdout).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(ids.count == 2 && ids[0] == ids[1], "the child leads its own group: \(ids)")
        #expect(try await run(shell("exit 7")).1 == .exited(7))
        #expect(throws: ProcessLaunchError.self) { try start(ProcessSpec(executable: "/no/such/program", environment: testEnvironment)) }
    }

    /// A spawn that fails (in the child, after the fork) leaves no
    /// descriptor and no child behind, not even a zombie.
    @Test func failedSpawnsScenario() async throws {
        guard IsolatedScenarioTests.selected == "failedSpawns" else { return }
        #expect(try await run(shell("true")).1 == .exited(0))  // the loop and /dev/null exist
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = directory + "/garbage"
        try Data([0, 1, 2, 3]).write(to: URL(fileURLWithPath: garbage))
        chmod(garbage, 0o755)
        let failing = [
            ProcessSpec(executable: garbage, environment: testEnvironment),
            ProcessSpec(executable: "/no/such/program", environment: testEnvironment),
            shell("true", directory: "/no/such/directory"),
            shell("true", directory: garbage),
        ]
        func failAll() {
            for spec in failing {
                #expect(throws: ProcessLaunchError.self) { try start(spec) }
            }
        }
        func descriptors() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").sorted()
        }
        failAll()  // (closes the spare death pipe the first child left)
        let before = try descriptors()
        failAll()
        #expect(try descriptors() == before)
        var info = siginfo_t()
        #expect(waitid(P_ALL, 0, &info, WEXITED | WNOHANG) == -1 && errno == ECHILD)
    }

    private func isGone(_ pid: pid_t) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if Glibc.kill(pid, 0) != 0 && errno == ESRCH { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}
