import Glibc
import MoonSystem

/// Reaping children, killing them all at moon's end, and job control.
extension ProcessLauncher {
    /// Called on the loop's thread when `process`'s pidfd is readable: kills
    /// what is left of its group (the leader is a zombie, so the pgid is
    /// still its own), then reaps the leader.
    func reap(_ process: LaunchedProcess) -> Termination {
        lock.withLock { _ in
            let pid = process.pid
            _ = Glibc.kill(-pid, SIGKILL)
            var status: Int32 = 0
            var result: pid_t
            // `wait4`, not `waitpid`: the same one call, with what the leader
            // and the descendants it waited for used.
            var used = rusage()
            repeat {
                result = wait4(pid, &status, WNOHANG, &used)
            } while result < 0 && errno == EINTR
            if result == pid { process.usage.add(used) }
            process.isReaped = true
            if let pair = process.deathPipe {
                // Its group is dead: the pair can serve the next child.
                if spareDeathPipes.count < Self.spareDeathPipeLimit {
                    spareDeathPipes.append(pair)
                } else {
                    pair.close()
                }
            }
            process.deathPipe = nil
            live[pid] = nil
            reapGeneration &+= 1
            if isSubreaper { reapGroupLocked(pid, into: &process.usage) }
            if let cgroup = process.cgroup {
                // Its leader is reaped and its group killed: what the cgroup saw is the tree's.
                (process.usage.cgroupPeakBytes, process.usage.memoryKills) = cgroups.finish(cgroup)
                if let peak = process.usage.cgroupPeakBytes { process.usage.maxResidentBytes = peak }
                process.cgroup = nil
            }
            return result == pid ? Termination(waitStatus: status) : .exited(-1)
        }
    }

    /// SIGKILLs every child's group that is still running, and, after
    /// `becomeSubreaper()`, every process that left its node's group, with
    /// its descendants: for moon's own shutdown. Call it from ordinary code,
    /// not from an async-signal handler: it takes a lock. Completion
    /// callbacks still follow as the children are reaped.
    ///
    /// An orphan (a process that left its node's group with `setsid` or
    /// `setpgid`, or a daemon's child) is re-parented to moon, and when it
    /// dies its own children are too: so this kills each orphan and the
    /// group it leads, reaps them, and looks at moon's children again, until
    /// none is left. Each turn takes one generation of the tree; a process
    /// that does not die within `orphanKillLimit` (stuck in the kernel) is
    /// left to the periodic sweep.
    public func killAll() {
        let subreaper: Bool = lock.withLock { _ in
            for (pid, process) in live where !process.isReaped {
                process.killSent = true
                _ = Glibc.kill(-pid, SIGKILL)
                // Its cgroup goes with the rest, even if moon reaps it no more.
                if let cgroup = process.cgroup { cgroups.removeLater(cgroup) }
            }
            // A launcher that started nothing has no orphans (a run of up-to-date nodes lists no children).
            return isSubreaper && hasSpawned
        }
        // Then the nodes' memory cgroups go, once what was in them is gone.
        defer { cgroups.removeAll() }
        guard subreaper else { return }
        let deadline = LinuxCalls.monotonicNanoseconds() + Self.orphanKillLimit
        while LinuxCalls.monotonicNanoseconds() < deadline {
            // A child being spawned is not registered yet: it is no orphan.
            let killed: Bool = lock.withLock { _ in
                guard spawnsInFlight == 0 else { return false }
                killOrphanGenerationsLocked(until: deadline)
                return true
            }
            if killed { return }
            usleep(100)
        }
    }

    /// SIGKILLs the orphans (after `becomeSubreaper()`) that a node which
    /// has ended left behind, with the groups they lead: the environment a
    /// process was started with names its node (`MOON_NODE`, which the
    /// processes a node starts inherit), and `ended` says whether that node
    /// has ended. An orphan that names no node is left to `killAll`. For
    /// watch mode, where moon's own end may be hours away: at each run's
    /// end, and when a service stops. Call from ordinary code (it takes a lock).
    public func killOrphans(ofNodes ended: (String) -> Bool) {
        let deadline = LinuxCalls.monotonicNanoseconds() + Self.orphanKillLimit
        while LinuxCalls.monotonicNanoseconds() < deadline {
            let done: Bool = lock.withLock { _ in
                guard isSubreaper else { return true }
                // A child being spawned is not registered yet, and carries its node's name.
                guard spawnsInFlight == 0 else { return false }
                let orphans = orphansLocked().filter { pid in Self.nodeName(of: pid).map(ended) ?? false }
                for pid in orphans { killOrphanLocked(pid, SIGKILL) }
                // Reap them; the children they leave are re-parented to moon and found in the next turn.
                // (One stuck in the kernel past the deadline is left to the periodic sweep.)
                for pid in orphans {
                    var status: Int32 = 0
                    while LinuxCalls.monotonicNanoseconds() < deadline {
                        let result = waitpid(pid, &status, WNOHANG)
                        if result == pid || (result < 0 && errno != EINTR) { break }
                        usleep(50)
                    }
                }
                return orphans.isEmpty
            }
            if done { return }
            usleep(100)
        }
    }

    /// The node a process was started for: `MOON_NODE` in its environment.
    static func nodeName(of pid: pid_t) -> String? {
        let environment = LinuxCalls.readSmallFile("/proc/\(pid)/environ")
        for entry in environment.split(separator: "\0") where entry.hasPrefix("MOON_NODE=") {
            return String(entry.dropFirst("MOON_NODE=".count))
        }
        return nil
    }

    /// How long `killAll` keeps killing generations of orphans.
    static let orphanKillLimit: UInt64 = 3_000_000_000

    /// `killAll`'s turns over the orphans. Call with `lock` held (orphans
    /// are reaped under it, so none of their pids can be recycled meanwhile).
    private func killOrphanGenerationsLocked(until deadline: UInt64) {
        while LinuxCalls.monotonicNanoseconds() < deadline {
            let orphans = orphansLocked()
            if orphans.isEmpty { return }
            for pid in orphans { killOrphanLocked(pid, SIGKILL) }
            // Reap what died; the survivors' turn comes again.
            for pid in orphans {
                var status: Int32 = 0
                while waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR {}
            }
            usleep(200)
        }
    }

    /// moon's children that are not its nodes' main processes: orphans
    /// re-parented to it. Call with `lock` held.
    func orphansLocked() -> [pid_t] {
        LinuxCalls.childPids().filter { live[$0] == nil }
    }

    /// Sends `signal` to the orphan `pid` and to the group it leads, if it
    /// leads one (it called `setsid` or `setpgid(0, 0)`: its descendants
    /// are there). Another group it joined is not signalled: it may be one
    /// of the process groups in moon's POSIX session (setsid) that moon did not make. Call with `lock` held.
    func killOrphanLocked(_ pid: pid_t, _ signal: Int32) {
        if getpgid(pid) == pid { _ = Glibc.kill(-pid, signal) }
        _ = Glibc.kill(pid, signal)
    }

    // MARK: Job control

    /// Ctrl-Z: stops every node (SIGSTOP to each child's group: a node
    /// runs in a group of its own, which the terminal's SIGTSTP does not
    /// reach) and the orphans, then moon itself; once moon is continued
    /// (`fg`, `bg`), continues them all. Call on the loop's thread.
    public func suspend() {
        suspend(whileStopped: {})
    }

    /// `suspend`, calling `continued` after moon is continued and before the nodes are.
    func suspend(whileStopped continued: () -> Void) {
        signalEverything(SIGSTOP)
        _ = Glibc.kill(getpid(), SIGSTOP)
        continued()
        resume()
    }

    /// SIGCONT to every node's group and orphan (after `suspend`, or when
    /// someone else stopped and continued moon).
    public func resume() {
        signalEverything(SIGCONT)
    }

    private func signalEverything(_ signal: Int32) {
        lock.withLock { _ in
            for (pid, process) in live where !process.isReaped {
                _ = Glibc.kill(-pid, signal)
            }
            guard isSubreaper, spawnsInFlight == 0 else { return }
            for pid in orphansLocked() { killOrphanLocked(pid, signal) }
        }
    }
}
