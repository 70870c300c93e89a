import Foundation
import Testing

let deployGraph = """
    version: 1
    nodes:
      build:
        run: echo built
      deploy:
        needs: [build]
        confirm: "Deploy to production?"
        run: 'echo deployed; touch deployed'
      announce:
        needs: [deploy]
        run: 'touch announced'
      lint:
        run: 'touch linted'
    """

/// `confirm:` (docs/terminal.md): asked on the terminal after the node's
/// needs, answered y or n there; never waited for without a terminal;
/// `--yes` answers for all; declined skips the node and its dependents and fails the run.
@Suite(.serialized)
struct ConfirmTests {
    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func answeredYesOnTheTerminal() throws {
        let moon = try Moon(graph: deployGraph)
        let session = TmuxSession(in: moon)
        session.start("run")
        let asked = try #require(session.waitFor { $0.contains("Deploy to production? [y/N]") }, "no question:\n\(session.screen())")
        #expect(asked.contains("moon: deploy: Deploy to production? [y/N]"), "\(asked)")
        // Asked after its need: build has run.
        #expect(!FileManager.default.fileExists(atPath: moon.path("deployed")))
        session.type("y", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("MOON-EXIT=0"), "\(done)")
        #expect(FileManager.default.fileExists(atPath: moon.path("deployed")))
        #expect(FileManager.default.fileExists(atPath: moon.path("announced")))
    }

    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func declinedOnTheTerminalSkipsTheNodeAndItsDependentsAndFailsTheRun() throws {
        let moon = try Moon(graph: deployGraph)
        let session = TmuxSession(in: moon)
        session.start("run")
        _ = try #require(session.waitFor { $0.contains("[y/N]") }, "no question:\n\(session.screen())")
        session.type("n", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
        #expect(done.contains("deploy skipped (declined)"), "\(done)")
        #expect(done.contains("announce skipped (declined)"), "\(done)")
        #expect(done.contains("2 declined"), "\(done)")
        #expect(done.contains("FAILED: a confirmation was declined"), "\(done)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("deployed")))
        #expect(!FileManager.default.fileExists(atPath: moon.path("announced")))
        // A node that does not depend on it ran.
        #expect(FileManager.default.fileExists(atPath: moon.path("linted")))
    }

    /// At a terminal, but with stdout the `--json` stream and stderr gone:
    /// no terminal shows the question, so it is not asked (the node fails
    /// at once, saying to pass --yes) and the events stay JSON.
    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func aQuestionNoTerminalShowsIsNotAskedAndTheEventsStayJSON() throws {
        let moon = try Moon(graph: deployGraph)
        let session = TmuxSession(in: moon)
        session.start("run --json 2>/dev/null > out.jsonl")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "it waited:\n\(session.screen())")
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
        #expect(!done.contains("[y/N]"), "\(done)")
        let lines = (moon.read("out.jsonl") ?? "").split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("{") && !$0.contains("[y/N]") }, "\(lines)")
        #expect(lines.contains { $0.contains("--yes") }, "the error says what to do")
    }

    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func ctrlCWithdrawsAnOpenQuestion() throws {
        let moon = try Moon(graph: deployGraph)
        let session = TmuxSession(in: moon)
        session.start("run")
        _ = try #require(session.waitFor { $0.contains("[y/N]") }, "no question:\n\(session.screen())")
        session.type("C-c")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not stop:\n\(session.screen())")
        #expect(done.contains("(withdrawn)"), "\(done)")
        #expect(done.contains("MOON-EXIT=130"), "\(done)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("deployed")))
    }

    @Test func withoutATerminalTheNodeFailsAtOnceSayingToPassYes() throws {
        let moon = try Moon(graph: deployGraph)
        let started = Date()
        let result = try moon.run(["run", "--json"], limit: 20)
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(result.status == 1)
        let error = try #require(result.error(of: "deploy"))
        #expect(error.message.contains("--yes"), "\(error.message)")
        #expect(result.outcome("announce") == "upstream-failed", "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("deployed")))
        // Plain output on a pipe says the same.
        let plain = try shell("\"$MOON\" run < /dev/null 2>&1", in: moon, limit: 20)
        #expect(plain.status == 1)
        #expect(plain.stdout.contains("pass --yes"), "\(plain.stdout)")
        // A question with escapes and a carriage return: the error carries none of them.
        let hostile = try Moon(graph: "version: 1\nnodes:\n  ask: { confirm: \"Deploy \\e[31mRED\\r\\e[2J?\", run: \"true\" }\n")
        let refused = try hostile.run(["run", "--json"], limit: 20)
        let message = try #require(refused.error(of: "ask")).message
        #expect(!message.contains("\u{1B}") && !message.contains("\r"), "\(message)")
        #expect(message.contains("Deploy  [31mRED  [2J?"), "\(message)")
    }

    @Test func yesAnswersForAll() throws {
        let moon = try Moon(graph: deployGraph)
        for flag in ["--yes", "-y"] {
            try? FileManager.default.removeItem(atPath: moon.path("deployed"))
            let result = try moon.run(["run", flag], limit: 30)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: moon.path("deployed")))
        }
    }

    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func declinedIsTheSkipReasonOfTheNodeAndItsDependentsInTheEvents() throws {
        let moon = try Moon(graph: deployGraph)
        let session = TmuxSession(in: moon)
        // Events into a file, the question on the terminal (stderr).
        session.start("run --json > events.jsonl")
        _ = try #require(session.waitFor { $0.contains("[y/N]") }, "no question:\n\(session.screen())")
        session.type("n", "Enter")
        let done = try #require(session.waitFor { $0.contains("MOON-EXIT=") }, "did not finish:\n\(session.screen())")
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
        let events = Moon.Result(stdout: moon.read("events.jsonl") ?? "", stderr: "", status: 1)
        #expect(events.outcome("deploy") == "declined", "\(events.stdout)")
        #expect(events.outcome("announce") == "declined", "\(events.stdout)")
        #expect(events.outcome("lint") == "ran", "\(events.stdout)")
    }

    @Test func aNodeThatWouldNotRunAsksNothing() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              deploy:
                confirm: "Deploy?"
                sources: [in.txt]
                run: 'touch deployed'
            """)
        try moon.write("in.txt", "1")
        #expect(try moon.run(["run", "--yes"]).status == 0)
        // Up to date: no question, so no terminal needed and no --yes.
        let again = try moon.run(["run", "--json"], limit: 20)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.outcome("deploy") == "up-to-date", "\(again.stdout)")
        // Changed: it asks again (and, with no terminal, fails saying so).
        try moon.write("in.txt", "2")
        let changed = try moon.run(["run", "--json"], limit: 20)
        #expect(changed.status == 1)
        #expect(changed.error(of: "deploy")?.message.contains("--yes") == true, "\(changed.stdout)")
    }

    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func aHostileQuestionIsPrintedWithoutItsEscapes() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              first:
                run: echo first-line
              deploy:
                needs: [first]
                confirm: "Deploy?\\e[2J\\e[H\\e]2;pwned\\a\\nnow"
                run: "true"
            """)
        let session = TmuxSession(in: moon)
        session.start("run")
        let asked = try #require(session.waitFor { $0.contains("[y/N]") }, "no question:\n\(session.screen())")
        // The screen was not cleared (what came before is still there) and the question is one line.
        #expect(asked.contains("first-line"), "\(asked)")
        #expect(asked.contains("moon: deploy: Deploy?"), "\(asked)")
        #expect(asked.split(separator: "\n").contains { $0.contains("now [y/N]") && $0.contains("Deploy?") }, "\(asked)")
        session.type("n", "Enter")
        _ = session.waitFor { $0.contains("MOON-EXIT=") }
        let title = spawnAndWait(TmuxSession.tmux!, ["-L", session.socket, "display-message", "-p", "#{pane_title}"]).stdout
        #expect(!title.contains("pwned"), "\(title)")
    }

    @Test func aQuestionFromAHostileRepoCannotReachTheTerminalAsEscapes() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              deploy:
                confirm: "Deploy?\\e]2;pwned\\a\\e[2J now"
                run: "true"
            """)
        let result = try moon.run(["run"], limit: 20)
        #expect(result.status == 1)
        #expect(!result.stdout.contains("\u{1B}") && !result.stderr.contains("\u{1B}"), "\(result.stdout)\(result.stderr)")
        #expect(!result.stdout.contains("\u{07}"))
    }
}
