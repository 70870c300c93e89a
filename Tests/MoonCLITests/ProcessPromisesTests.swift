import Foundation
import MoonEvents
import Testing

/// What moon promises about the processes it starts and the signals it
/// gets, against hostile nodes: nothing a node starts outlives the run,
/// whatever it does to leave its process group; a node cannot make moon
/// block (a FIFO as `$MOON_OUTPUT`); Ctrl-\ and Ctrl-Z do what a user
/// expects; the run's timeout gives one consistent verdict; a tiny
/// descriptor limit is an error, never a crash. (docs/promises.md)
@Suite(.serialized) struct ProcessPromisesTests {
    // MARK: Nothing left running

    /// Four ways out of a node's process group, each with children of its
    /// own: `setsid -f` of a shell that runs `sleep`; a subshell's `setsid`
    /// with two background sleeps; perl's `setpgrp` and a `system` (a shell
    /// and its sleep); a double-forking daemon (fork, setsid, fork) with two
    /// workers. Each node waits until its escapees are in place.
    static let escapeGraph = """
        version: 1
        queues: { default: { concurrency: 5 } }
        nodes:
          setsid-f:
            run: |
              setsid -f sh -c 'touch p1.ready; sleep 4101; true'
              while [ ! -e p1.ready ]; do sleep 0.02; done
          subshell:
            run: |
              ( setsid sh -c 'touch p2.ready; sleep 4102 & sleep 4103; true' & )
              while [ ! -e p2.ready ]; do sleep 0.02; done
          setpgid:
            run: |
              perl -e 'setpgrp(0, 0); open(F, ">p3.ready"); close F; system("sleep 4104; true")' &
              while [ ! -e p3.ready ]; do sleep 0.02; done
          daemon:
            run: |
              perl -e 'use POSIX; exit 0 if fork; POSIX::setsid(); exit 0 if fork; for (1..2) { exec "sleep", "4105" unless fork } open(F, ">p4.ready"); close F; sleep 1000'
              while [ ! -e p4.ready ]; do sleep 0.02; done
          hold:
            run: |
              while [ ! -e p1.ready ] || [ ! -e p2.ready ] || [ ! -e p3.ready ] || [ ! -e p4.ready ]; do sleep 0.02; done
              sleep 0.3
              echo ready
              if [ "$HOLD" = 1 ]; then sleep 300; fi
        """

    enum Ending: String, CaseIterable {
        case normal, interrupt, closedPipe
    }

    /// After the run ends — normally, by Ctrl-C, or because the reader of
    /// its output went away — no process any node started is left, however
    /// it left its node's group. Found by a marker every one of them
    /// carries (the test's directory, in `MOON_GRAPH_DIR`), not by pid.
    @Test(arguments: Ending.allCases)
    func processesThatLeaveTheirGroupDieWithTheRun(ending: Ending) throws {
        let moon = try Moon(graph: Self.escapeGraph)
        switch ending {
        case .normal:
            let result = try moon.run(["run", "--json"], limit: 60)
            #expect(result.status == 0, "\(result.stderr)")
        case .interrupt:
            let running = try moon.start(["run", "--json"], environment: ["HOLD": "1"])
            #expect(eventually(30) { running.events.contains { $0.text == "ready" } })
            running.signal(SIGINT)
            let result = try running.wait(limit: 30)
            #expect(result.status == 130, "\(result.stderr)")
        case .closedPipe:
            // A reader that closes the pipe at the raw line is the point: no decoder between.
            let result = try shell(#""$MOON" run --json | grep -m1 '"text":"ready"'; echo "status=${PIPESTATUS[0]}""#,
                                   in: moon, bash: true, environment: ["HOLD": "1"])
            #expect(result.stdout.contains("status=141"), "\(result.stdout) \(result.stderr)")
        }
        for file in ["p1.ready", "p2.ready", "p3.ready", "p4.ready"] {
            #expect(moon.read(file) != nil, "\(file): the escape did not happen")
        }
        var left: [String] = []
        #expect(eventually(3) {
            left = survivors(of: moon)
            return left.isEmpty
        }, "left running: \(left)")
        killSurvivors(of: moon)
    }

    // MARK: $MOON_OUTPUT that is not a file

    /// A node that replaces its `$MOON_OUTPUT` file with a FIFO (whose open
    /// would wait for a writer for ever), a symbolic link, a directory or a
    /// device cannot make moon wait: the node fails with a clear error, the
    /// other nodes run on, and the run ends.
    @Test func anOutputsFileThatIsNotARegularFileIsAnError() throws {
        var members = """
            version: 1
            queues: { default: { concurrency: 6 } }
            nodes:
              fifo: { run: 'mkfifo "$MOON_OUTPUT"' }
              link: { run: 'echo a=1 > target; ln -s "$PWD/target" "$MOON_OUTPUT"' }
              directory: { run: 'mkdir "$MOON_OUTPUT"' }
              ticker: { run: 'for i in 1 2 3; do echo tick $i; sleep 0.1; done' }

            """
        let root = getuid() == 0
        if root { members += "  device: { run: 'mknod \"$MOON_OUTPUT\" c 1 3' }\n" }
        let moon = try Moon(graph: members)
        let began = Date()
        let result = try moon.run(["run", "--json", "-k"], limit: 30)
        #expect(Date().timeIntervalSince(began) < 20)
        #expect(result.status == 1)
        func message(_ node: String) -> String {
            result.events("error", node: node).first?.error?.message ?? "no error"
        }
        #expect(message("fifo").contains("a FIFO, not a regular file"), "\(message("fifo"))")
        #expect(message("link").contains("symbolic link"), "\(message("link"))")
        #expect(message("directory").contains("a directory, not a regular file"), "\(message("directory"))")
        if root { #expect(message("device").contains("a character device"), "\(message("device"))") }
        #expect(result.events("complete", node: "ticker").count == 1)
    }

    // MARK: Signals

    /// Ctrl-\ (SIGQUIT) and SIGHUP stop the run as SIGTERM does: the node
    /// is cancelled, moon exits 128 + the signal (131, 129), and no crash
    /// report is printed.
    @Test(arguments: [SIGQUIT, SIGHUP])
    func sigquitAndSighupCancelTheRun(signal: Int32) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: 'echo started; sleep 300' }
            """)
        let running = try moon.start(["run", "--json"])
        #expect(eventually(30) { running.events.contains { $0.text == "started" } })
        running.signal(signal)
        let result = try running.wait(limit: 30)
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(!result.stderr.contains("crashed") && !result.stderr.contains("Backtrac"), "\(result.stderr)")
        let error = result.events("error", node: "a").first?.error
        #expect(error?.kind == .canceled)
        #expect(survivors(of: moon).isEmpty)
    }

    /// The other signals whose default would end moon stop the run as
    /// SIGTERM does: the node is cancelled, the history records the run,
    /// moon exits 128 + the signal. SIGTTIN and SIGTTOU (a terminal's
    /// answer to a background moon) neither stop nor end it.
    @Test(arguments: [SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT, SIGTTOU])
    func otherTerminatingSignalsStopTheRunCleanly(signal: Int32) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: 'echo started; if [ -e short ]; then sleep 1; else sleep 300; fi' }
            """)
        if signal == SIGTTOU { try moon.write("short", "") }
        let running = try moon.start(["run", "--json"])
        #expect(eventually(30) { running.events.contains { $0.text == "started" } })
        running.signal(signal)
        if signal == SIGTTOU { running.signal(SIGTTIN) }
        let result = try running.wait(limit: 30)
        if signal == SIGTTOU {
            #expect(result.status == 0, "\(result.stderr)")
            return
        }
        #expect(result.status == 128 + signal, "\(result.stderr)")
        let error = result.events("error", node: "a").first?.error
        #expect(error?.kind == .canceled)
        #expect(try moon.run(["history"]).stdout.contains("interrupted"))
        #expect(survivors(of: moon).isEmpty)
    }

    /// Ctrl-Z (SIGTSTP) stops the nodes with moon, and `fg` (SIGCONT)
    /// continues them: a node counting in a file stops counting.
    @Test func ctrlZStopsTheNodesAndFgResumesThem() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              count: { run: 'echo $$ > count.pid; i=0; while :; do i=$((i+1)); echo $i > count; sleep 0.05; done' }
            """)
        let running = try moon.start(["run", "--json"])
        defer { running.signal(SIGKILL) }
        #expect(eventually(30) { (moon.read("count").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0) > 2 })
        let node = try #require(moon.read("count.pid").flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        running.signal(SIGTSTP)
        #expect(eventually(10) { processState(running.pid) == "T" }, "moon did not stop")
        #expect(eventually(10) { processState(node) == "T" }, "the node did not stop")
        // A stopped process cannot write: once every process of the node's
        // group is stopped, the count it wrote last is the count (awaited,
        // not a pause that hopes nothing happens).
        #expect(eventually(10) { !processGroup(of: node).isEmpty && processGroup(of: node).allSatisfy { processState($0) == "T" } },
                "a process of the node's group runs on: \(processGroup(of: node).map { ($0, processState($0)) })")
        let stoppedAt = moon.read("count")
        #expect(processGroup(of: node).allSatisfy { processState($0) == "T" } && moon.read("count") == stoppedAt,
                "the node counted on while stopped")
        running.signal(SIGCONT)
        #expect(eventually(10) { processState(node) != "T" && moon.read("count") != stoppedAt }, "the node did not resume")
        running.signal(SIGINT)
        let result = try running.wait(limit: 30)
        #expect(result.status == 130)
    }

    // MARK: The run's timeout

    /// `--timeout` that expires as the last node ends: whatever the race
    /// decides, the `graph-complete` event, its counts and the exit code
    /// agree (a run whose every node succeeded is ok).
    @Test func aRunTimeoutAtTheLastNodesEndGivesOneVerdict() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: [sleep, "0.1"] }
            """)
        for _ in 0..<12 {
            let result = try moon.run(["run", "--json", "--timeout", "102ms"], limit: 30)
            guard let complete = result.events("graph-complete").first else {
                Issue.record("no graph-complete: \(result.stdout)")
                continue
            }
            let ok = complete.ok
            let counts = complete.counts ?? RunCounts()
            if ok == true {
                #expect(result.status == 0)
                #expect(counts.succeeded == 1 && counts.canceled == 0)
                #expect(result.events("complete", node: "a").count == 1)
            } else {
                #expect(result.status == 1)
                #expect(counts.canceled == 1 && counts.succeeded == 0, "\(counts)")
                #expect(result.events("error", node: "a").count == 1)
            }
        }
    }

    /// `--timeout 0` is refused, as a node's `timeout: 0s` is.
    @Test func aZeroRunTimeoutIsRefused() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "true" }
            """)
        for zero in ["0", "0s", "0ms"] {
            let result = try moon.run(["run", "--timeout", zero])
            #expect(result.status == 2)
            #expect(result.stderr.contains("--timeout must be longer than 0s"), "\(result.stderr)")
        }
    }

    // MARK: Descriptor limits

    /// A descriptor limit too low to start with (`ulimit -n` 4 to 31) is a
    /// clear error, never a crash in libdispatch's start-up.
    @Test func aTinyDescriptorLimitIsAClearError() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "true" }
            """)
        for limit in [4, 5, 8, 16, 31] {
            for _ in 0..<3 {
                let result = try shell(#"ulimit -n \#(limit) && exec "$MOON" run"#, in: moon)
                #expect(result.status == 1, "ulimit -n \(limit): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("moon needs at least"), "ulimit -n \(limit): \(result.stderr)")
                #expect(!result.stderr.contains("Signal") && !result.stderr.contains("crash"), "\(result.stderr)")
            }
        }
    }
}

// MARK: Out of descriptors, hashing huge sources

extension ProcessPromisesTests {
    /// Out of descriptors (`ulimit -n 40`: about five nodes at once), the
    /// nodes that wait for one wait without freezing moon's event loop: a
    /// ticker's lines are reported as they come (their event times spread
    /// over the seconds it prints), not in one burst once every node has
    /// started.
    @Test func eventsFlowWhileNodesWaitForDescriptors() throws {
        var graph = """
            version: 1
            queues: { default: { concurrency: 50 } }
            nodes:
              ticker: { run: 'for i in 1 2 3 4 5; do echo tick $i; sleep 0.5; done' }

            """
        for index in 0..<14 { graph += "  n\(index): { run: 'sleep 2' }\n" }
        let moon = try Moon(graph: graph)
        let result = try shell(#"ulimit -n 40 && exec "$MOON" run --json -j 50"#, in: moon, limit: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let ticks = result.events("next", node: "ticker").map(\.time)
        #expect(ticks.count == 5)
        if let first = ticks.first, let last = ticks.last {
            #expect(last.timeIntervalSince(first) >= 1.5, "the ticks were reported in a burst: \(ticks)")
        }
        #expect(result.events("error").isEmpty)
    }

    /// Out of descriptors, `--timeout` still stops the run on time, also
    /// the nodes still waiting to start.
    @Test func theRunTimeoutFiresWhileNodesWaitForDescriptors() throws {
        var graph = "version: 1\nqueues: { default: { concurrency: 50 } }\nnodes:\n"
        for index in 0..<14 { graph += "  n\(index): { run: 'sleep 60' }\n" }
        let moon = try Moon(graph: graph)
        let began = Date()
        let result = try shell(#"ulimit -n 40 && exec "$MOON" run --json -j 50 --timeout 2s"#, in: moon, limit: 120)
        #expect(Date().timeIntervalSince(began) < 9, "the run's timeout of 2s took \(Date().timeIntervalSince(began))s")
        #expect(result.status == 1)
        #expect(result.events("error").count == 14)
        #expect(survivors(of: moon).isEmpty)
    }

    /// A node's timeout counts from its real start, not from the time it
    /// spent waiting for a descriptor: short nodes with `timeout: 2s` all
    /// succeed although most wait longer than that.
    @Test func waitingForADescriptorDoesNotCountAgainstANodesTimeout() throws {
        var graph = "version: 1\nqueues: { default: { concurrency: 50 } }\nnodes:\n"
        for index in 0..<40 { graph += "  n\(index): { run: 'sleep 0.4', timeout: 2s }\n" }
        let moon = try Moon(graph: graph)
        let result = try shell(#"ulimit -n 40 && exec "$MOON" run --json -j 50"#, in: moon, limit: 120)
        #expect(result.status == 0, "\(result.events("error"))")
        #expect(result.events("complete").count == 40)
    }

    enum HashStop: String, CaseIterable {
        case interrupt, timeout, closedPipe
    }

    /// A 9 GB source (sparse) takes seconds to hash. Ctrl-C, the run's
    /// `--timeout` and a reader that goes away still end the run promptly:
    /// the hashing is cut short.
    @Test(arguments: HashStop.allCases)
    func hashingAHugeSourceIsInterruptible(by stop: HashStop) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { sources: ["data/**"], run: "true" }
            """)
        try FileManager.default.createDirectory(at: moon.directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let big = moon.path("data/big.bin")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 9 << 30) == 0)
        func hashing(_ pid: Int32) -> Bool {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))?.hasSuffix("big.bin") == true }
        }
        switch stop {
        case .interrupt:
            let running = try moon.start(["run", "--json"])
            #expect(eventually(30) { hashing(running.pid) })
            let sent = Date()
            running.signal(SIGINT)
            let result = try running.wait(limit: 60)
            #expect(Date().timeIntervalSince(sent) < 3, "SIGINT took \(Date().timeIntervalSince(sent))s")
            #expect(result.status == 130)
            #expect(result.events("skip", node: "a").first?.reason == .canceled)
        case .timeout:
            let began = Date()
            let result = try moon.run(["run", "--json", "--timeout", "1s"], limit: 60)
            #expect(Date().timeIntervalSince(began) < 4, "--timeout 1s took \(Date().timeIntervalSince(began))s")
            #expect(result.status == 1)
        case .closedPipe:
            let began = Date()
            let result = try shell(#""$MOON" run --json | head -c 1 >/dev/null; echo "status=${PIPESTATUS[0]}""#, in: moon, bash: true)
            #expect(Date().timeIntervalSince(began) < 4, "a closed pipe took \(Date().timeIntervalSince(began))s")
            #expect(result.stdout.contains("status=141"), "\(result.stdout)")
        }
    }
}

// MARK: Helpers

/// The processes still alive (not zombies) that carry `moon`'s test
/// directory in their environment: every process a node started does.
func survivors(of moon: Moon) -> [String] {
    let marker = Data(moon.directory.lastPathComponent.utf8)
    var found: [String] = []
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let pid = Int32(entry), pid != getpid(), isAlive(pid) else { continue }
        guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
              environment.range(of: marker) != nil else { continue }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
            .replacingOccurrences(of: "\0", with: " ") ?? "?"
        found.append("\(pid): \(command)")
    }
    return found
}

/// Kills what `survivors` finds, so a failing test leaves nothing behind.
func killSurvivors(of moon: Moon) {
    for line in survivors(of: moon) {
        if let pid = Int32(line.prefix { $0 != ":" }) { kill(pid, SIGKILL) }
    }
}

/// The state letter of `/proc/PID/stat` (R, S, T, Z…), or nil.
func processState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(close, offsetBy: 2)]
}

/// The live processes of `pid`'s process group (`/proc/*/stat`'s pgrp).
func processGroup(of pid: Int32) -> [Int32] {
    func group(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After ") ": state, ppid, pgrp.
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        return fields.count > 2 ? Int32(fields[2]) : nil
    }
    guard let leader = group(pid) else { return [] }
    let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    return pids.filter { group($0) == leader && processState($0) != "Z" }
}
