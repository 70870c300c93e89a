import ArgumentParser
import Foundation
import MoonProcess

/// The `moon` command: subcommands for running, checking and showing graphs.
/// One place (`main`) turns errors into exit codes (DESIGN.md §4).
@main
struct Moon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moon",
        abstract: "Run task graphs described in YAML: named queues, retries, timeouts and a real event stream.",
        discussion: """
        A graph file (moon.yaml) describes nodes - shell commands or built-in \
        commands - and their needs. See moon.yaml(5) for the format.

        Exit codes: 0 every node succeeded, 1 a node failed, 2 the graph file \
        or the command line is invalid, 130 interrupted (143 on SIGTERM).
        """,
        version: moonVersion,
        subcommands: [RunCommand.self, CheckCommand.self, ListCommand.self, GraphCommand.self, ExportCommand.self, StatusCommand.self,
                      HistoryCommand.self, SchemaCommand.self, ReplayCommand.self, CacheCommand.self],
        defaultSubcommand: nil
    )

    static func main() {
        let startProblem = ProcessStartup.prepare()
        ensureStandardDescriptors()
        if let startProblem {
            Console.error(startProblem)
            Foundation.exit(1)
        }
        blockChildSignals()
        Console.takeOverBrokenPipes()
        let code: Int32
        do {
            var command = try parseAsRoot()
            try command.run()
            code = 0
        } catch let error as CLIError {
            Console.error("\(error)")
            code = error.exitCode
        } catch {
            let message = fullMessage(for: error)
            let exitCode = exitCode(for: error)
            if exitCode == .success {
                if !message.isEmpty { Console.line(message) }
                code = 0
            } else {
                if !message.isEmpty { Console.errorLine(message) }
                // swift-argument-parser uses EX_USAGE (64) for usage errors;
                // moon's contract says 2, like most Unix tools.
                code = exitCode == .validationFailure ? ExitCode.invalidInput.rawValue : exitCode.rawValue
            }
        }
        Foundation.exit(Console.exitCode(code))
    }
}

let moonVersion = "0.1.0"

/// moon learns of a child's exit from its pidfd, never from SIGCHLD, so no
/// thread needs waking for one. Blocked here, before any thread exists, it
/// is blocked in every thread moon starts; nodes get an empty mask (the
/// spawner sets it), and pending SIGCHLDs are not inherited.
func blockChildSignals() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGCHLD)
    pthread_sigmask(SIG_BLOCK, &set, nil)
}

/// If moon was started with stdin, stdout or stderr closed, the next file it
/// opens would take that number and a child's output could land in it:
/// hold /dev/null there instead.
func ensureStandardDescriptors() {
    for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 {
        let null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
        if null >= 0 && null != fd {
            dup2(null, fd)
            close(null)
        }
    }
}

extension ExitCode {
    /// The graph file, a recording or the command line is invalid (moon's
    /// contract: 2, as most Unix tools; not argument-parser's EX_USAGE).
    static let invalidInput = ExitCode(2)
}
