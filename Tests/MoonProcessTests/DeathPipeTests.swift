import Foundation
import Glibc
import Testing
@testable import MoonProcess
import CMoonSpawn

/// The death pipe is what kills a node's group when moon dies without
/// running any code (SIGKILL). Here the test process plays moon: closing
/// one end of an armed pair is what the kernel does first when moon dies.
/// The whole path, with the real binary killed by SIGKILL, is in
/// MoonCLITests/RobustnessTests.
@Suite struct DeathPipeTests {
    /// A group of two sleeps (the leader and a background job), and their pids.
    private func startGroup() async throws -> (Recorder, any ProcessHandle, [pid_t]) {
        let (recorder, handle) = try start(shell("sleep 1000 & echo $!; echo $$; wait"))
        let first = await recorder.line { _ in true }
        let second = await recorder.line { $0.text != first?.text }
        let pids = [first, second].compactMap { $0.flatMap { pid_t($0.text) } }
        #expect(pids.count == 2)
        return (recorder, handle, pids)
    }

    @Test(arguments: [true, false])
    func closingEitherEndFirstKillsTheWholeGroup(readEndFirst: Bool) async throws {
        let (recorder, handle, pids) = try await startGroup()
        let pair = try DeathPipe.make().get()
        for fd in [pair.readEnd, pair.writeEnd] { #expect(fcntl(fd, F_SETOWN, -handle.pid) == 0) }
        close(readEndFirst ? pair.readEnd : pair.writeEnd)
        for pid in pids { #expect(await becomesDead(pid)) }
        #expect(await recorder.termination() == .signaled(SIGKILL))
        close(readEndFirst ? pair.writeEnd : pair.readEnd)
    }

    @Test func anUnarmedPairKillsNothing() async throws {
        let (recorder, handle, pids) = try await startGroup()
        let pair = try DeathPipe.make().get()
        // No owner on either end: the kernel has nobody to signal when they close.
        #expect(fcntl(pair.readEnd, F_GETOWN) == 0)
        #expect(fcntl(pair.writeEnd, F_GETOWN) == 0)
        pair.close()
        for pid in pids { #expect(!isDead(pid)) }
        handle.kill()
        #expect(await recorder.termination() == .signaled(SIGKILL))
    }

    /// A reaped child's pair is armed again for a later child, and closing
    /// one end of it then kills that later child's group.
    @Test func aReusedPairIsArmedForItsNewGroup() async throws {
        let (first, firstHandle) = try start(shell("exit 0"))
        #expect(await first.termination() == .exited(0))
        _ = firstHandle
        let (recorder, handle, pids) = try await startGroup()
        let process = try #require(handle as? LaunchedProcess)
        // Taken from the launcher, so that the reap does not keep a pair
        // whose end this test closes.
        let pair = try #require(launcher.lock.withLock { _ -> DeathPipe? in
            defer { process.deathPipe = nil }
            return process.deathPipe
        })
        for fd in [pair.readEnd, pair.writeEnd] {
            #expect(fcntl(fd, F_GETOWN) == -handle.pid)
        }
        // What the kernel does when moon dies: one end goes first.
        close(pair.readEnd)
        for pid in pids { #expect(await becomesDead(pid)) }
        #expect(await recorder.termination() == .signaled(SIGKILL))
        close(pair.writeEnd)
    }

    /// The spawner hands back a child whose group already owns the pair:
    /// moon killed the instant the spawn returns still takes the node along.
    @Test func theSpawnerArmsThePairBeforeItReturns() throws {
        let pair = try DeathPipe.make().get()
        defer { pair.close() }
        let strings: [UnsafeMutablePointer<CChar>?] = ["/bin/sleep", "1000"].map { text in text.withCString { strdup($0) } }
        defer { strings.forEach { free($0) } }
        let argv = strings + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = [nil]
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let status = argv.withUnsafeBufferPointer { argv in
            envp.withUnsafeBufferPointer { envp in
                "/bin/sleep".withCString { path in
                    var request = moon_spawn_request(
                        path: path, argv: argv.baseAddress, envp: envp.baseAddress, directory: nil,
                        stdin_fd: devNull, stdout_fd: devNull, stderr_fd: devNull,
                        death_fds: (pair.readEnd, pair.writeEnd), foreground_fd: -1,
                        cgroup_fd: -1, home_fd: -1, cgroup_entered: 0)
                    return moon_spawn(&request, &pid, &pidfd)
                }
            }
        }
        #expect(status == 0)
        defer {
            kill(-pid, SIGKILL)
            var wstatus: Int32 = 0
            waitpid(pid, &wstatus, 0)
            close(pidfd)
        }
        for fd in [pair.readEnd, pair.writeEnd] {
            #expect(fcntl(fd, F_GETOWN) == -pid)
        }
    }

    @Test func everyLaunchedChildIsArmedAndTheChildDoesNotSeeThePipe() async throws {
        // The child lists its descriptors: only 0, 1, 2 (and ls's own).
        let (recorder, termination) = try await run(ProcessSpec(executable: "ls", arguments: ["/proc/self/fd"], environment: testEnvironment))
        #expect(termination == .exited(0))
        #expect(recorder.texts(.stdout).count <= 4)
        // moon holds two O_ASYNC pipe ends owned by the running child's group.
        let (sleeper, handle) = try start(shell("exec sleep 1000"))
        defer { handle.kill() }
        let process = try #require(handle as? LaunchedProcess)
        let pair = try #require(launcher.lock.withLock { _ in process.deathPipe })
        for fd in [pair.readEnd, pair.writeEnd] {
            #expect(fcntl(fd, F_GETOWN) == -handle.pid)
            #expect(fcntl(fd, F_GETFL) & 0o20000 != 0)
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        }
        handle.kill()
        #expect(await sleeper.termination() == .signaled(SIGKILL))
        #expect(launcher.lock.withLock { _ in process.deathPipe } == nil)
    }
}
