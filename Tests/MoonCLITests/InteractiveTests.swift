import Foundation
import Testing

extension TmuxSession {
    /// Types `keys` into the window, as tmux's send-keys reads them (`Enter`, `C-c`).
    func type(_ keys: String...) {
        spawnAndWait(Self.tmux!, ["-L", socket, "send-keys"] + keys)
    }
}

/// `interactive: true` (docs/terminal.md): the node gets moon's terminal —
/// what is typed reaches it, its output is the terminal's, the live view
/// steps aside and comes back — and without a terminal it reads moon's stdin.
@Suite(.serialized, .enabled(if: TmuxSession.available, "tmux is not installed (make test-deps, or apt-get install tmux)"))
struct InteractiveTests {
    @Test func anInteractiveNodeReadsWhatIsTypedAndTheViewComesBack() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              setup:
                interactive: true
                run: 'printf "name? "; read name; echo "hello $name" > out; echo "got $name"'
              after:
                needs: [setup]
                run: echo after-ran
            """)
        let session = TmuxSession(in: moon)
        session.start("run")
        let asked = try #require(session.waitFor { $0.contains("name?") }, "no prompt:\n\(session.screen())")
        // The status area stepped aside: no `[0/2]` line under the node's prompt.
        #expect(!asked.contains("[0/2]"), "\(asked)")
        session.type("Ada", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(moon.read("out") == "hello Ada\n")
        #expect(done.contains("got Ada"), "\(done)")
        #expect(done.contains("after-ran"), "\(done)")
        #expect(done.contains("MOON-EXIT=0"), "\(done)")
        #expect(done.contains("ok - 2 succeeded"), "\(done)")
    }

    @Test func ctrlCReachesTheInteractiveNodeAndTheTerminalComesBack() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              shell:
                interactive: true
                run: 'trap "echo caught-int > int; exit 3" INT; echo waiting; while :; do sleep 0.1; done'
            """)
        let session = TmuxSession(in: moon)
        session.start("run")
        _ = try #require(session.waitFor { $0.contains("waiting") }, "did not start:\n\(session.screen())")
        session.type("C-c")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        // The node's group had the terminal: its trap ran, and moon (not
        // interrupted itself) reports the node's exit.
        #expect(eventually { moon.read("int") == "caught-int\n" })
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
        #expect(done.contains("exit code 3") || done.contains("exited 3") || done.contains("3"), "\(done)")
    }

    @Test func aCancelledInteractiveNodeGivesTheTerminalBackAsItWas() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              raw:
                interactive: true
                run: 'stty -echo -icanon; echo $$ > pid; echo raw-set; sleep 30'
            """)
        let session = TmuxSession(in: moon)
        // After moon: the terminal's modes, then a read that only the
        // foreground group can do (a background one is stopped by SIGTTIN).
        session.start("run --timeout 1s --grace 1s; stty -a > stty.txt; read typed; echo typed=$typed")
        _ = try #require(session.waitFor { $0.contains("raw-set") }, "did not start:\n\(session.screen())")
        #expect(eventually(30) { moon.read("stty.txt") != nil })
        session.type("abc", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "the shell did not get the terminal back:\n\(session.screen())")
        #expect(done.contains("typed=abc"), "\(done)")
        let modes = moon.read("stty.txt") ?? ""
        #expect(modes.contains(" echo ") && modes.contains(" icanon"), "\(modes)")
        #expect(!modes.contains("-echo ") && !modes.contains("-icanon"), "\(modes)")
        // Cancelled by the run's --timeout, the node left no process behind.
        let pid = try #require(Int32((moon.read("pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(!isAlive(pid))
    }

    /// How a full-screen node dies without cleaning up after itself.
    enum Kill: String, CaseIterable, CustomStringConvertible {
        case nodeTimeout, sigkill, ctrlC, runTimeout
        var description: String { rawValue }
    }

    /// A full-screen program killed while it had the alternate screen, no
    /// cursor, mouse reporting and application keys on leaves none of them
    /// behind: moon takes the screen back as the program would have on its
    /// way out, and the live view draws again where it was.
    @Test(arguments: Kill.allCases)
    func aKilledFullScreenNodeLeavesTheScreenAsItWas(_ kill: Kill) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              full:
                interactive: true
                \(kill == .nodeTimeout ? "timeout: 3s" : "")
                run: 'echo $$ > pid; printf "\\033[?1049h\\033[?25l\\033[?1000h\\033[?1006h\\033[?2004h\\033[?1h\\033="; echo full-screen; sleep 100'
              other:
                run: 'echo other-started; while [ ! -f stop ]; do sleep 0.05; done'
            """)
        let session = TmuxSession(in: moon)
        session.start(kill == .runTimeout ? "run --timeout 3s --grace 1s" : "run --keep-going")
        let pane = { (format: String) in spawnAndWait(TmuxSession.tmux!, ["-L", session.socket, "display", "-p", format]).stdout }
        #expect(eventually(30) { pane("#{alternate_on}#{cursor_flag}") == "10\n" }, "\(session.screen())")
        let read = { Int32((moon.read("pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) }
        switch kill {
        case .nodeTimeout, .runTimeout: break
        case .sigkill:
            #expect(eventually(20) { read() != nil })
            Glibc.kill(-(try #require(read())), SIGKILL)
        case .ctrlC:
            #expect(eventually(20) { read() != nil })
            let pid = try #require(read())
            // Typed again while the node lives: on a loaded machine a key sent through tmux may come late.
            for _ in 0..<3 where isAlive(pid) {
                session.type("C-c")
                _ = eventually(10) { !isAlive(pid) }
            }
        }
        let flags = "alt=#{alternate_on} cursor=#{cursor_flag} mouse=#{mouse_standard_flag}#{mouse_sgr_flag} keys=#{keypad_cursor_flag}#{keypad_flag}"
        #expect(eventually(30) { pane(flags) == "alt=0 cursor=1 mouse=00 keys=00\n" }, "\(pane(flags))\n\(session.screen())")
        if kill == .runTimeout {
            let done = try #require(session.waitFor(30) { $0.contains("MOON-EXIT=") }, "\(session.screen())")
            #expect(done.contains("--timeout of 3s expired"), "\(done)")
            return
        }
        // The live view is back: the other node's row is drawn again, under
        // the lines printed before the node took the terminal.
        // (The held line of the other node may come a moment after its row.)
        let back = session.waitFor(20) { $0.contains("full") && $0.contains("[1/2]") && $0.contains("other-started") }
        #expect(back != nil, "\(session.screen())")
        _ = FileManager.default.createFile(atPath: moon.path("stop"), contents: nil)
        let done = try #require(session.waitFor(30) { $0.contains("MOON-EXIT=") }, "\(session.screen())")
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
    }

    @Test func ctrlZStopsTheRunAndFgGivesTheTerminalBackToTheNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              setup:
                interactive: true
                run: 'echo $$ > pid; printf "name? "; read name; echo "hello $name" > out'
            """)
        let session = TmuxSession(in: moon)
        // An interactive shell, for its job control (`fg`).
        let script = "cd '\(moon.directory.path)' && env -u NO_COLOR TERM=xterm-256color PS1='$ ' bash --norc --noprofile -i"
        spawnAndWait(TmuxSession.tmux!, ["-L", session.socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", script])
        session.type("'\(Moon.binary)' run", "Enter")
        _ = try #require(session.waitFor { $0.contains("name?") && !$0.contains("name? $") }, "no prompt:\n\(session.screen())")
        session.type("C-z")
        _ = try #require(session.waitFor { $0.contains("Stopped") }, "the shell did not see moon stop:\n\(session.screen())")
        session.type("fg", "Enter")
        // The node has the terminal again: what is typed reaches its read.
        // Typed only once it runs in the foreground: bash itself drops what
        // is typed after `fg` before the job has the terminal, whatever the job.
        let pid = try #require(Int32((moon.read("pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(eventually(20) { Self.runsInTheForeground(pid) }, "\(session.screen())")
        session.type("Ada", "Enter")
        let done = try #require(session.waitFor { $0.contains("moon: ok - 1 succeeded") }, "did not finish:\n\(session.screen())")
        #expect(moon.read("out") == "hello Ada\n", "\(done)")
    }

    @Test func otherNodesKeepRunningAndTheirOutputIsHeldUntilTheInteractiveNodeEnds() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              ask:
                interactive: true
                run: 'printf "continue? "; read answer; echo "answer=$answer" > out'
              busy:
                run: 'for i in 1 2 3; do echo busy-line-$i; sleep 0.2; done; touch busy.done'
            """)
        let session = TmuxSession(in: moon)
        session.start("run")
        _ = try #require(session.waitFor { $0.contains("continue?") }, "no prompt:\n\(session.screen())")
        // busy runs meanwhile; its lines are held, not drawn over the prompt.
        #expect(eventually(20) { FileManager.default.fileExists(atPath: moon.path("busy.done")) })
        let held = session.screen()
        #expect(!held.contains("busy-line-1"), "\(held)")
        session.type("yes", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("busy-line-3"), "\(done)")
        #expect(moon.read("out") == "answer=yes\n")
        #expect(done.contains("MOON-EXIT=0"), "\(done)")
    }

    @Test func interactiveNodesRunOneAtATime() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              first:
                interactive: true
                run: 'printf "first?"; read a; echo "$a" > first.out'
              second:
                interactive: true
                run: 'printf "second?"; read b; echo "$b" > second.out'
            """)
        let session = TmuxSession(in: moon)
        session.start("run")
        let one = try #require(session.waitFor { $0.contains("first?") || $0.contains("second?") }, "no prompt:\n\(session.screen())")
        #expect(!(one.contains("first?") && one.contains("second?")), "\(one)")
        session.type("one", "Enter")
        _ = try #require(session.waitFor { $0.contains("first?") && $0.contains("second?") }, "no second prompt:\n\(session.screen())")
        session.type("two", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("MOON-EXIT=0"), "\(done)")
        #expect(Set([moon.read("first.out"), moon.read("second.out")]) == Set(["one\n", "two\n"]))
    }

    @Test func withoutATerminalAnInteractiveNodeReadsMoonsStandardInput() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              setup:
                interactive: true
                run: 'read answer; echo "answer=$answer"'
              other:
                run: 'cat; echo other-done'
            """)
        let piped = try shell("echo y | \"$MOON\" run", in: moon, limit: 30)
        #expect(piped.status == 0, "\(piped.stderr)")
        // Its output is captured as any node's; the other node's stdin stays /dev/null.
        #expect(piped.stdout.contains("setup") && piped.stdout.contains("answer=y"), "\(piped.stdout)")
        #expect(piped.stdout.contains("other-done"), "\(piped.stdout)")
        let json = try shell("echo z | \"$MOON\" run --json setup", in: moon, limit: 30)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains("answer=z"), "\(json.stdout)")
    }

    @Test func badValuesAreErrorsWithTheirLocation() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: "true"
                confirm: true
              b:
                run: "true"
                confirm: "  "
              c:
                run: "true"
                interactive: yes-please
              d:
                run: "true"
                service: true
                interactive: true
              e:
                run: "true"
                confirm: "Deploy ${{ vars.env }}?"
            defaults:
              interactive: true
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:5:14: error: 'confirm' is the question to ask, not true"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:8:14: error: 'confirm' is empty"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:11:18: error: expected true or false for 'interactive'"), "\(result.stderr)")
        #expect(result.stderr.contains("cannot be both a service and interactive"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:18:14: error: 'confirm' is asked as written: it cannot hold ${{ }}"), "\(result.stderr)")
        #expect(result.stderr.contains("unknown key 'interactive'"), "\(result.stderr)")
    }

    @Test func aGroupCannotBeInteractive() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: "true" }
              g:
                needs: [a]
                interactive: true
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("is a group"), "\(result.stderr)")
    }

    /// `pid` runs (not stopped) and its group is its terminal's foreground (/proc/PID/stat: state, pgrp, tpgid).
    static func runsInTheForeground(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 5 else { return false }
        return fields[0] != "T" && fields[2] == fields[5]
    }
}
