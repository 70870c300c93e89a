import Foundation
import MoonEvents
import Testing

/// `moon run --watch` on real files: the tests edit files and wait on the
/// JSON events moon writes (never on time alone), with bounds generous
/// enough for a loaded machine.
/// Over 400 lines: one scenario of watch mode per test, each with its own graph.
@Suite("watch mode")
struct WatchTests {
    /// A watch in progress: its events so far, read from its stdout file.
    struct Watching {
        let moon: Moon
        let running: Moon.Running

        var events: [RunEvent] { running.events }

        var stderr: String { (try? String(contentsOf: running.err, encoding: .utf8)) ?? "" }

        func count(_ name: String, node: String? = nil) -> Int {
            events.filter { $0.name == name && (node == nil || $0.node == node) }.count
        }

        /// Waits until `count` runs have ended.
        func waitForRuns(_ count: Int, _ comment: Comment? = nil) -> Bool {
            eventually(60) { self.count("graph-complete") >= count }
        }

        /// Nodes started after the `index`th watch event (1-based), up to the next one.
        func started(inRerun index: Int) -> [String] {
            var seen = 0
            var nodes: [String] = []
            for event in events {
                if event.name == "watch" { seen += 1; continue }
                if seen == index, event.name == "start", let node = event.node { nodes.append(node) }
            }
            return nodes
        }

        func watchEvents() -> [RunEvent] { events.filter { $0.name == "watch" } }

        /// Ctrl-C: exit 130.
        func interrupt() throws -> Moon.Result {
            running.signal(SIGINT)
            return try running.wait(limit: 30)
        }
    }

    static func start(_ moon: Moon, _ extra: [String] = []) throws -> Watching {
        Watching(moon: moon, running: try moon.start(["run", "--watch", "--json"] + extra))
    }

    /// Replaces a file by renaming a new one over it, as editors save.
    static func save(_ moon: Moon, _ name: String, _ text: String) throws {
        try moon.write(name + ".moon-test-tmp", text)
        #expect(rename(moon.path(name + ".moon-test-tmp"), moon.path(name)) == 0)
    }

    static let abc = """
        version: 1
        nodes:
          a:
            run: cat src/a.txt
            sources: [src/a.txt]
          b:
            run: cat src/b.txt
            sources: [src/b.txt]
          c:
            needs: [a]
            run: echo c
        """

    static func project(_ graph: String = abc) throws -> Moon {
        let moon = try Moon(graph: graph)
        try FileManager.default.createDirectory(atPath: moon.path("src"), withIntermediateDirectories: true)
        try moon.write("src/a.txt", "a1\n")
        try moon.write("src/b.txt", "b1\n")
        return moon
    }

    @Test("an edit reruns the nodes whose sources changed and their dependents, only those")
    func editRerunsTheRightNodes() throws {
        let moon = try Self.project()
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(watch.count("start") == 3)
        try moon.write("src/a.txt", "a2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        let trigger = try #require(watch.watchEvents().first)
        #expect(trigger.changed == ["src/a.txt"])
        #expect(trigger.nodes == ["a", "c"])
        #expect(watch.started(inRerun: 1).sorted() == ["a", "c"])
        #expect(watch.events.contains { $0.name == "next" && $0.text == "a2" })
        try moon.write("src/b.txt", "b2\n")
        #expect(watch.waitForRuns(3))
        #expect(watch.started(inRerun: 2) == ["b"])
        let result = try watch.interrupt()
        #expect(result.status == 130)
        // seq keeps increasing across reruns.
        let seqs = Moon.events(in: result.stdout).map(\.seq)
        #expect(seqs == Array(1...seqs.count))
        // The stream keeps to the event schema, run by run.
        try moon.write("events.jsonl", result.stdout)
        let check = try shell("python3 \(Moon.root.path)/schema/validate-events.py events.jsonl --complete", in: moon)
        #expect(check.status == 0 || check.status == 3, "\(check.stderr)")
    }

    @Test("a save by rename (an editor's) reruns the node; the temporary file does not")
    func saveByRename() throws {
        let moon = try Self.project()
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        try Self.save(moon, "src/a.txt", "a2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.watchEvents().first?.changed == ["src/a.txt"])
        #expect(watch.started(inRerun: 1).sorted() == ["a", "c"])
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a burst of 200 writes gives one rerun; a file in a directory created later counts; the next edit has a rerun of its own")
    func burstGivesOneRerunAndTheNextEditItsOwn() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              all:
                run: find src -name '*.txt' | wc -l
                sources: ["src/**/*.txt"]
            """)
        let watch = try Self.start(moon, ["--watch-debounce", "1s"])
        #expect(watch.waitForRuns(1))
        let script = try shell("mkdir -p src/new/deeper && for i in $(seq 200); do echo $i > src/new/deeper/f$i.txt; done", in: moon)
        #expect(script.status == 0)
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect((watch.watchEvents().first?.changed)?.count == 200)
        #expect(watch.events.contains { $0.name == "next" && $0.text?.contains("202") == true })
        // A sentinel edit: a second rerun of the burst would come before its rerun, or merge into it.
        try moon.write("src/sentinel.txt", "s\n")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        #expect(watch.watchEvents().count == 2)
        #expect(watch.watchEvents().last?.changed == ["src/sentinel.txt"])
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a node still running when its input changes is cancelled and started again; a running node it does not affect carries on")
    func runningNodeRestarts() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              slow:
                run: echo $$ >> starts.log; cat src/a.txt; sleep 60
                sources: [src/a.txt]
              steady:
                run: echo $$ >> steady.log; sleep 60
            """)
        let watch = try Self.start(moon, ["--grace", "2s"])
        #expect(eventually(60) { (moon.read("starts.log") ?? "").split(separator: "\n").count == 1 })
        // One event for the change (a plain write can make two triggers when it is slow).
        try Self.save(moon, "src/a.txt", "a2\n")
        #expect(eventually(60) { (moon.read("starts.log") ?? "").split(separator: "\n").count >= 2 }, "\(watch.stderr) \(watch.events)")
        let pids = (moon.read("starts.log") ?? "").split(separator: "\n").compactMap { Int32($0) }
        try #require(pids.count >= 2)
        #expect(eventually(30) { pids.dropLast().allSatisfy { !isAlive($0, of: moon) } }, "the stale attempt is gone")
        #expect(isAlive(pids.last!, of: moon))
        let canceled = watch.events.filter { $0.name == "error" && $0.node == "slow" }
        #expect(canceled.first?.error?.kind == .canceled)
        #expect(watch.watchEvents().first?.nodes == ["slow"])
        // The node the edit does not touch was not stopped: one process, still there.
        let steady = (moon.read("steady.log") ?? "").split(separator: "\n").compactMap { Int32($0) }
        #expect(steady.count == 1)
        #expect(steady.allSatisfy { isAlive($0, of: moon) })
        #expect(watch.count("error", node: "steady") == 0)
        let result = try watch.interrupt()
        #expect(result.status == 130)
        #expect(!isAlive(pids.last!, of: moon), "Ctrl-C leaves nothing running")
        #expect(steady.allSatisfy { !isAlive($0, of: moon) })
        try Self.validate(result, in: moon)
    }

    /// The stream keeps to the event schema, run by run (when jsonschema is installed).
    static func validate(_ result: Moon.Result, in moon: Moon) throws {
        try moon.write("events.jsonl", result.stdout)
        let check = try shell("python3 \(Moon.root.path)/schema/validate-events.py events.jsonl --complete", in: moon)
        #expect(check.status == 0 || check.status == 3, "\(check.stderr)")
    }

    @Test("a service keeps running across reruns, restarts when its inputs change, and Ctrl-C stops it")
    func serviceRestartsOnChange() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              serve:
                service: true
                restart: on-change
                run: echo $$ >> serve.log; cat src/a.txt; exec sleep 600
                sources: [src/a.txt]
              ready:
                needs: [serve]
                uses: wait-for
                with: {path: serve.log}
              other:
                needs: [ready]
                run: cat src/b.txt
                sources: [src/b.txt]
            """)
        let watch = try Self.start(moon, ["--grace", "2s"])
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        func pids() -> [Int32] { (moon.read("serve.log") ?? "").split(separator: "\n").compactMap { Int32($0) } }
        #expect(pids().count == 1)
        #expect(watch.count("complete", node: "other") == 1)
        // The run ended with the service still up, and says so.
        #expect(watch.events.last { $0.name == "graph-complete" }?.running == ["serve"])
        try Self.save(moon, "src/b.txt", "b2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(pids().count == 1, "an edit the service does not read leaves it running")
        #expect(isAlive(pids()[0], of: moon))
        #expect(watch.started(inRerun: 1).contains("other"))
        try Self.save(moon, "src/a.txt", "a2\n")
        #expect(eventually(60) { pids().count == 2 }, "\(watch.stderr)")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        let all = pids()
        #expect(eventually(30) { !isAlive(all[0], of: moon) }, "the old service is stopped")
        #expect(isAlive(all[1], of: moon))
        let result = try watch.interrupt()
        #expect(result.status == 130)
        #expect(!isAlive(all[1], of: moon), "Ctrl-C stops the service")
        try Self.validate(result, in: moon)
    }

    @Test("restart: never leaves a service running when its inputs change; its dependents still run again")
    func serviceWithRestartNever() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              serve:
                service: true
                restart: never
                run: echo $$ >> serve.log; exec sleep 600
                sources: [src/a.txt]
              check:
                needs: [serve]
                run: cat src/a.txt
            """)
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        try Self.save(moon, "src/a.txt", "a2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.started(inRerun: 1) == ["serve", "check"])
        #expect(watch.events.contains { $0.name == "next" && $0.text == "a2" })
        let pids = (moon.read("serve.log") ?? "").split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 1, "the service was not restarted")
        let carried = watch.events.last { $0.name == "start" && $0.node == "serve" }
        #expect(carried?.carried == true)
        let result = try watch.interrupt()
        #expect(result.status == 130)
        #expect(pids.allSatisfy { !isAlive($0, of: moon) })
        try Self.validate(result, in: moon)
    }

    @Test("a service that exits between runs is reported as its exit says")
    func serviceExitsBetweenRuns() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              serve:
                service: true
                run: cat src/a.txt; sleep 1; exit 4
                sources: [src/a.txt]
            """)
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        #expect(watch.events.last { $0.name == "graph-complete" }?.running == ["serve"])
        #expect(eventually(60) { watch.count("error", node: "serve") == 1 }, "\(watch.stderr)")
        let error = try #require(watch.events.last { $0.name == "error" })
        #expect(error.error?.exitCode == 4)
        // Its next change starts it again.
        try Self.save(moon, "src/a.txt", "a2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.started(inRerun: 1) == ["serve"])
        let result = try watch.interrupt()
        #expect(result.status == 130)
        try Self.validate(result, in: moon)
    }

    @Test("live view: a service's output shows under the watching header between runs; Ctrl-C stops it",
          .enabled(if: TmuxSession.available))
    func liveViewWithService() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              serve:
                service: true
                run: echo $$ > serve.pid; while :; do echo tick; sleep 0.3; done
              build:
                run: cat src/a.txt
                sources: [src/a.txt]
            """)
        let tmux = TmuxSession(in: moon)
        tmux.start("run --watch")
        let screen = tmux.waitFor(60) { $0.contains("watching") && $0.contains("last run ok") && $0.contains("serve │ tick") }
        #expect(screen != nil, "\(tmux.screen())")
        let pid = try #require(Int32((moon.read("serve.pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        // The header stays the last line while the service writes.
        let lines = (screen ?? "").split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.last?.contains("watching") == true, "\(screen ?? "")")
        spawnAndWait(TmuxSession.tmux!, ["-L", tmux.socket, "send-keys", "C-c"])
        #expect(tmux.waitFor(60) { $0.contains("MOON-EXIT=130") } != nil, "\(tmux.screen())")
        #expect(eventually(10) { !isAlive(pid, of: moon) }, "Ctrl-C leaves nothing running")
    }

    @Test("with inotify's limit reached, moon says so and polls")
    func pollingFallbackAtTheLimit() throws {
        // A user of its own whose inotify instances are all taken: the
        // limit is per user, so other tests are not disturbed.
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("pollingFallbackAtTheLimit: skipped, it needs root, setpriv and python3 to run moon as a user whose inotify instances are taken")
            return
        }
        let uid = 40_000 + Int(getpid() % 10_000)
        let asUser = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]
        let moon = try Self.project()
        let reachable = try shell(asUser.joined(separator: " ") + " \(Moon.binary) --version", in: moon)
        guard reachable.status == 0 else {
            print("pollingFallbackAtTheLimit: skipped, uid \(uid) cannot run \(Moon.binary): \(reachable.stderr)")
            return
        }
        let chown = try shell("chown -R \(uid):\(uid) .", in: moon)
        try #require(chown.status == 0)
        let hog = Process()
        hog.executableURL = URL(fileURLWithPath: asUser[0])
        hog.arguments = Array(asUser.dropFirst()) + ["/usr/bin/python3", "-c", """
            import ctypes, sys, time
            libc = ctypes.CDLL(None, use_errno=True)
            fds = [libc.inotify_init() for _ in range(4096)]
            print(sum(1 for f in fds if f >= 0), flush=True)
            sys.stdin.read()
            """]
        let input = Pipe(), output = Pipe()
        hog.standardInput = input
        hog.standardOutput = output
        try hog.run()
        defer {
            try? input.fileHandleForWriting.close()
            hog.waitUntilExit()
        }
        let taken = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(Int(taken.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(taken)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: asUser[0])
        process.arguments = Array(asUser.dropFirst()) + [Moon.binary, "run", "--watch", "--json"]
        process.currentDirectoryURL = moon.directory
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["HOME"] = moon.directory.path
        environment["MOON_CACHE_DIR"] = moon.path(".cache")
        process.environment = environment
        let out = moon.directory.appendingPathComponent(".stdout"), err = moon.directory.appendingPathComponent(".stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let running = try Moon.Running(launching: process, out: out, err: err)
        let watch = Watching(moon: moon, running: running)
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        #expect(eventually(30) { watch.stderr.contains("polling") && watch.stderr.contains("max_user_instances") }, "\(watch.stderr)")
        try moon.write("src/a.txt", "a22\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.started(inRerun: 1).sorted() == ["a", "c"])
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a graph file edited into an invalid state shows the error and waits; fixed, it runs again")
    func graphInvalidAndBack() throws {
        let moon = try Self.project()
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        try Self.save(moon, "moon.yaml", "version: 1\nnodes:\n  a:\n    run: [unclosed\n")
        #expect(eventually(60) { watch.stderr.contains("moon.yaml:") }, "\(watch.stderr)")
        #expect(watch.running.process.isRunning)
        try Self.save(moon, "moon.yaml", Self.abc.replacingOccurrences(of: "echo c", with: "echo c2"))
        #expect(eventually(60) {
            watch.events.contains { $0.name == "next" && $0.text == "c2" }
        }, "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
    }

    @Test("an included graph file is watched like the graph file: an edit reloads the graph")
    func includedFileReloads() throws {
        let moon = try Self.project("""
            version: 1
            includes:
              lib: lib/moon.yaml
            nodes:
              top:
                needs: ["lib:hello"]
                run: echo top
            """)
        try FileManager.default.createDirectory(atPath: moon.path("lib"), withIntermediateDirectories: true)
        try moon.write("lib/moon.yaml", "version: 1\nnodes:\n  hello:\n    run: echo one\n")
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        try Self.save(moon, "lib/moon.yaml", "version: 1\nnodes:\n  hello:\n    run: echo two\n")
        #expect(eventually(60) {
            watch.events.contains { $0.name == "next" && $0.text == "two" }
        }, "\(watch.stderr)")
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a node's own generates never trigger its rerun: each rerun is an edit's")
    func generatesNeverTrigger() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              gen:
                run: cat src/a.txt > src/out.txt
                sources: ["src/*.txt"]
                generates: [src/out.txt]
            """)
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(moon.read("src/out.txt") == "a1\n")
        // Each edit is a sentinel: a rerun for a write of out.txt would come before its rerun, or merge into it.
        try moon.write("src/a.txt", "a2\n")
        #expect(watch.waitForRuns(2))
        #expect(eventually(10) { moon.read("src/out.txt") == "a2\n" })
        #expect(watch.watchEvents().count == 1)
        #expect(watch.watchEvents().last?.changed == ["src/a.txt"])
        try moon.write("src/a.txt", "a3\n")
        #expect(watch.waitForRuns(3))
        #expect(watch.watchEvents().count == 2)
        #expect(watch.watchEvents().last?.changed == ["src/a.txt"])
        #expect(try watch.interrupt().status == 130)
    }

    @Test("a file a depfile listed and a dotenv file are inputs too")
    func depfileAndDotenv() throws {
        let moon = try Self.project("""
            version: 1
            dotenv: [.env]
            nodes:
              obj:
                run: |
                  cat src/a.txt include/h.h > out.o
                  printf 'out.o: src/a.txt include/h.h\\n' > out.d
                sources: [src/a.txt]
                generates: [out.o]
                depfile: out.d
              greet:
                run: echo "hello $WHO"
            """)
        try FileManager.default.createDirectory(atPath: moon.path("include"), withIntermediateDirectories: true)
        try moon.write("include/h.h", "h1\n")
        try moon.write(".env", "WHO=one\n")
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        #expect(moon.read("out.d") != nil)
        try moon.write("include/h.h", "h2\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.watchEvents().first?.changed == ["include/h.h"])
        #expect(watch.started(inRerun: 1) == ["obj"])
        #expect(eventually(10) { moon.read("out.o") == "a1\nh2\n" })
        try Self.save(moon, ".env", "WHO=two\n")
        #expect(watch.waitForRuns(3), "\(watch.stderr)")
        // (A run already queued may end first: the new value reaches the next one.)
        #expect(eventually(60) { watch.events.contains { $0.name == "next" && $0.text == "hello two" } },
                "\(watch.stdoutLines)")
        watch.running.signal(SIGTERM)
        #expect(try watch.running.wait(limit: 30).status == 143)
    }

    /// The first run writes the depfile that names include/h.h, and the file
    /// changes before moon could watch its directory: it still counts.
    @Test("a depfile's file that changed before its directory was watched is caught up")
    func depfileCatchUp() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              obj:
                run: |
                  cat src/a.txt include/h.h > out.o
                  printf 'out.o: src/a.txt include/h.h\\n' > out.d
                  [ -f once ] || { touch once; echo h2 > include/h.h; }
                sources: [src/a.txt]
                generates: [out.o]
                depfile: out.d
            """)
        try FileManager.default.createDirectory(atPath: moon.path("include"), withIntermediateDirectories: true)
        try moon.write("include/h.h", "h1\n")
        let watch = try Self.start(moon)
        #expect(eventually(60) { watch.watchEvents().count == 1 }, "\(watch.stderr)")
        #expect(watch.watchEvents().first?.changed == ["include/h.h"])
        #expect(try watch.interrupt().status == 130)
    }

    /// `a → c ← b`, each node's output generated from its source.
    static let race = """
        version: 1
        nodes:
          a: { sources: [a.txt], generates: [a.out], run: "cp a.txt a.out" }
          b: { sources: [b.txt], generates: [b.out], run: "cp b.txt b.out" }
          c: { needs: [a, b], sources: [a.out, b.out, "src/**"], generates: [c.out], run: "cat a.out b.out > c.out" }
        """

    /// Starts watch mode `iterations` times on an up-to-date graph, runs
    /// `edit` (sh, `$i` the iteration) the moment the first run's
    /// `graph-complete` is read from a pipe, and says per iteration how
    /// many runs ended within 30 s (2 when the edit was seen) and whether
    /// node `node` started in the second.
    static func editAsTheRunEnds(_ moon: Moon, edit: String, node: String = "a", iterations: Int = 5) throws -> [String] {
        let script = """
            set -u
            mkfifo events
            for i in $(seq \(iterations)); do
              "$MOON" run --watch --json > events 2>> watch-err.txt & pid=$!
              exec 3< events
              runs=0; started=0
              while IFS= read -r -t 30 line <&3; do
                case "$line" in
                  *'"graph-complete"'*) runs=$((runs + 1)); [ $runs = 1 ] || break; \(edit) ;;
                  *'"event":"start","node":"\(node)"'*) [ $runs = 1 ] && started=1 ;;
                esac
              done
              kill -INT $pid; cat <&3 > /dev/null; wait $pid; exec 3<&-
              echo "runs=$runs started=$started"
            done
            """
        let result = try shell(script, in: moon, bash: true, limit: 300)
        #expect(result.status == 0, "\(result.stderr) \(moon.read("watch-err.txt") ?? "")")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    static func raceProject() throws -> Moon {
        let moon = try Moon(graph: race)
        try FileManager.default.createDirectory(atPath: moon.path("src"), withIntermediateDirectories: true)
        try moon.write("a.txt", "a0\n")
        try moon.write("b.txt", "b0\n")
        #expect(try moon.run(["run", "-q"]).status == 0)
        return moon
    }

    @Test("an edit written the moment a run ends is never lost: 5 watches, each reruns")
    func editAsTheRunEndsReruns() throws {
        let moon = try Self.raceProject()
        let lines = try Self.editAsTheRunEnds(moon, edit: "echo a$i > a.txt")
        #expect(lines == Array(repeating: "runs=2 started=1", count: 5))
    }

    @Test("a file created in a watched directory the moment a run ends reruns its node")
    func fileCreatedAsTheRunEnds() throws {
        let moon = try Self.raceProject()
        let lines = try Self.editAsTheRunEnds(moon, edit: "echo n > src/new$i.txt", node: "c", iterations: 3)
        #expect(lines == Array(repeating: "runs=2 started=1", count: 3))
    }

    @Test("an edit during the run's last node, and one after a node's fingerprint before its end, rerun the node")
    func editDuringTheRun() throws {
        // c, the last node, edits a's source once; a edits its own source
        // once after moon fingerprinted it.
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { sources: [a.txt], generates: [a.out], run: "cp a.txt a.out; if [ -e own ]; then rm own; echo a2 > a.txt; fi" }
              b: { sources: [b.txt], generates: [b.out], run: "cp b.txt b.out" }
              c: { needs: [a, b], sources: [a.out, b.out], generates: [c.out], run: "cat a.out b.out > c.out; if [ -e last ]; then rm last; echo a3 > a.txt; fi" }
            """)
        try moon.write("a.txt", "a0\n")
        try moon.write("b.txt", "b0\n")
        try moon.write("last", "")
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(eventually(30) { moon.read("c.out") == "a3\nb0\n" }, "\(watch.events)")
        try moon.write("own", "")
        try moon.write("a.txt", "a4\n")
        #expect(eventually(30) { moon.read("a.out") == "a2\n" && moon.read("c.out") == "a2\nb0\n" }, "\(watch.events)")
        #expect(try watch.interrupt().status == 130)
    }

    /// Live processes whose command line is `sleep SECONDS`.
    static func sleeps(_ seconds: String) -> Int {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.compactMap { Int32($0) }.filter { pid in
            guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return line == Data("sleep\0\(seconds)\0".utf8) && isAlive(pid)
        }.count
    }

    @Test("what nodes leave behind (setsid, a double fork) is killed at each run's end, a service's when it restarts; a running service's is kept")
    func leftoversAreKilledAtEachRunsEnd() throws {
        // Durations no other test's sleeps have.
        let token = String(Int.random(in: 100_000...999_999))
        let (job, daemon, served, service, kept, other) = ("1\(token)", "2\(token)", "3\(token)", "4\(token)", "5\(token)", "6\(token)")
        let moon = try Self.project("""
            version: 1
            nodes:
              job: { sources: ["src/**"], run: "setsid -f sleep \(job); (sh -c 'sleep \(daemon) &' &); echo done" }
              serve: { service: true, sources: [src/s.txt], run: "setsid -f sleep \(served); exec sleep \(service)" }
              other: { service: true, run: "setsid -f sleep \(kept); exec sleep \(other)" }
            """)
        try moon.write("src/s.txt", "s0\n")
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        #expect(eventually(20) { Self.sleeps(job) == 0 && Self.sleeps(daemon) == 0 }, "after the first run")
        #expect(eventually(20) { Self.sleeps(served) == 1 && Self.sleeps(kept) == 1 })
        for rerun in 1...3 {
            // Odd reruns: only the job; even: the service restarts too.
            try moon.write(rerun % 2 == 1 ? "src/a.txt" : "src/s.txt", "\(rerun)\n")
            #expect(watch.waitForRuns(1 + rerun), "\(watch.stderr)")
            #expect(eventually(20) { Self.sleeps(job) == 0 && Self.sleeps(daemon) == 0 }, "rerun \(rerun): \(Self.sleeps(job)) \(Self.sleeps(daemon))")
            #expect(eventually(20) { Self.sleeps(served) == 1 }, "rerun \(rerun): the service's leftovers: \(Self.sleeps(served))")
            #expect(Self.sleeps(kept) == 1 && Self.sleeps(other) == 1, "rerun \(rerun): a service still running keeps its own")
        }
        #expect(watch.count("start", node: "serve") >= 2, "the service restarted")
        #expect(try watch.interrupt().status == 130)
        #expect(eventually(20) { [job, daemon, served, service, kept, other].allSatisfy { Self.sleeps($0) == 0 } })
    }

    @Test("Ctrl-C while idle ends at once with 130; nothing is left running")
    func ctrlCWhileIdle() throws {
        let moon = try Self.project()
        let watch = try Self.start(moon)
        #expect(watch.waitForRuns(1))
        let result = try watch.interrupt()
        #expect(result.status == 130)
        #expect(result.events.last?.name == "graph-complete")
    }

    @Test("--watch-poll watches by polling, and says so")
    func polling() throws {
        let moon = try Self.project()
        let watch = try Self.start(moon, ["--watch-poll", "100ms"])
        #expect(watch.waitForRuns(1))
        #expect(eventually(30) { watch.stderr.contains("polling") })
        try moon.write("src/a.txt", "a22\n")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(watch.started(inRerun: 1).sorted() == ["a", "c"])
        #expect(try watch.interrupt().status == 130)
    }

    @Test("watch options are checked")
    func options() throws {
        let moon = try Self.project()
        let poll = try moon.run(["run", "--watch-poll", "1s"])
        #expect(poll.status == 2)
        #expect(poll.stderr.contains("--watch-poll needs --watch"))
        let dry = try moon.run(["run", "--watch", "-n"])
        #expect(dry.status == 2)
        let bad = try moon.run(["run", "--watch", "--watch-debounce", "soon"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--watch-debounce"))
    }
}
