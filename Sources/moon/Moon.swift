import ArgumentParser
import Foundation
import MoonCache
import MoonProcess
import MoonRun
import MoonSession

/// The `moon` command: subcommands for running, checking and showing graphs.
/// One place (`main`) turns errors into exit codes (DESIGN.md §4).
@main
struct Moon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moon",
        abstract: "Run task graphs described in YAML: named queues, retries, timeouts and a real event stream.",
        usage: """
            moon [run] [FILE] [NODE [NAME=VALUE...]...] [-- ARGS...] [OPTIONS]
            moon <subcommand> [ARGUMENTS] [OPTIONS]
            """,
        discussion: """
        A graph file (moon.yaml) describes nodes - shell commands or built-in \
        commands - and their needs. See moon.yaml(5) for the format. Without a \
        FILE, moon reads the nearest moon.yaml or moon.yml: here or in the closest \
        directory above.

        Plain `moon` runs the graph's `default:` nodes when it names some, and \
        otherwise lists the nodes (as `moon list`): it never runs a whole graph \
        by surprise. Without a graph file, it prints this help. `moon NODE...` \
        (a first word that is no subcommand) is `moon run NODE...`: \
        `moon test -- -k fast`, `moon -n build`.

        Exit codes: 0 every node succeeded, 1 a node failed (or stdout could \
        not be written), 2 the graph file or the command line is invalid, 130 \
        interrupted (143 on SIGTERM).
        """,
        version: versionLine,
        subcommands: [RunCommand.self, CheckCommand.self, ListCommand.self, GraphCommand.self, ExportCommand.self, StatusCommand.self,
                      HistoryCommand.self, SchemaCommand.self, ReplayCommand.self, CacheCommand.self, SimulateCommand.self,
                      TraceCommand.self, WhyCommand.self],
        defaultSubcommand: nil
    )

    /// `moon run NODE... -- WORDS`: the words after `--` are the last node's
    /// `${{ args }}`, read apart from the rest (argument-parser takes one
    /// array of positional words per command). With no FILE or NODE before
    /// it (`moon run -- FILE`), `--` only ends the options, as it always did.
    /// `run`, `status`, `graph` and `export` read the words after `--` so,
    /// as they all select nodes and a node's args are in its fingerprint
    /// and its command. A first word that is no subcommand (a node, a FILE,
    /// a `run` option) means `run`.
    static func parse(_ arguments: [String]) throws -> (command: ParsableCommand, passthrough: [String]) {
        let arguments = impliesRun(arguments) ? ["run"] + arguments : arguments
        if let first = arguments.first, selectingCommands.contains(first), let terminator = arguments.firstIndex(of: "--"),
           let head = try? parseAsRoot(Array(arguments[..<terminator])) as? SelectingCommand, !head.arguments.isEmpty {
            return (head, Array(arguments[(terminator + 1)...]))
        }
        return (try parseAsRoot(arguments), [])
    }

    static let selectingCommands: Set<String> = ["run", "status", "graph", "export"]

    /// The subcommands' names, for the hint of a node name that is close to
    /// one and to tell `moon NODE` from `moon SUBCOMMAND`. Written out, as
    /// reading them from `configuration` costs argument-parser's start-up;
    /// `FastLineTests` hold them to it.
    static let commandNames = ["run", "check", "list", "graph", "export", "status", "history", "schema", "replay", "cache", "simulate",
                               "trace", "why"]

    /// Whether `arguments` leave out `run`: the first word is neither a
    /// subcommand nor one of moon's own options (help, version, completion).
    static func impliesRun(_ arguments: [String]) -> Bool {
        guard let first = arguments.first else { return false }
        let subcommands = commandNames + ["help"]
        let own = ["-h", "--help", "-help", "--version", "--experimental-dump-help"]
        return !subcommands.contains(first) && !own.contains(first)
            && !first.hasPrefix("--generate-completion-script") && !first.hasPrefix("---completion")
    }

    /// Plain `moon` (no subcommand): the default nodes run, else the list.
    func run() throws { try Self.runDefaultNodes() }

    static func runDefaultNodes() throws {
        guard let path = try GraphFileLocator.discovered() else {
            Console.write(Moon.helpMessage() + "\n")
            return
        }
        let file = try GraphFile.load(path)
        if file.graph.defaultTargets.isEmpty {
            ListCommand.print(file.graph)
        } else {
            try RunRequest().run(file, words: [])
        }
    }

    static func main() {
        // moon as a Slurm node's task reporter: before anything changes what its command inherits.
        if CommandLine.arguments.count > 1, CommandLine.arguments[1] == SlurmTask.flag {
            SlurmTask.main(Array(CommandLine.arguments.dropFirst()))
        }
        // Before anything reads the environment or starts a thread: no node may find the remote cache's secrets in moon's.
        RemoteCredentials.take()
        // Ctrl-C ends moon before its event loop takes the signal over, even
        // when it was started ignoring or blocking SIGINT (a background job of
        // a script): a slow read of the graph file stays interruptible.
        signal(SIGINT, SIG_DFL)
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, nil)
        let startProblem = ProcessStartup.prepare()
        ensureStandardDescriptors()
        if let startProblem {
            Console.error(startProblem)
            Foundation.exit(1)
        }
        blockChildSignals()
        Console.takeOverSignals()
        let code: Int32
        do {
            let arguments = NameCompletion.boundedRequest(Array(CommandLine.arguments.dropFirst()))
            if let shell = NameCompletion.scriptRequest(arguments) {
                Console.standardOutput.write(NameCompletion.script(for: shell))
            } else if let line = FastLine.read(arguments) {
                try line.run()
            } else {
                let (parsed, passthrough) = try parse(arguments)
                var command = parsed
                if let selecting = command as? SelectingCommand { try selecting.run(passthrough: passthrough) } else { try command.run() }
            }
            code = 0
        } catch let error as CLIError {
            Console.error("\(error)")
            code = error.exitCode
        } catch let error as PrintedErrors {
            code = error.exitCode
        } catch let exit as ExitCode {
            // A run's own exit code: argument-parser's `exitCode(for:)` says the same, after building a usage text.
            code = exit == .validationFailure ? ExitCode.invalidInput.rawValue : exit.rawValue
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
/// `moon --version`: one line that also says which moon this is, as
/// moonrepo's Rust monorepo tool is `moon` too.
let versionLine = "moon \(moonVersion) (task-graph runner; not moonrepo's moon, moonrepo.dev)"

/// A command that selects nodes by `[FILE] [NODE...]` and gives the words
/// after `--` to the last node named, as its `${{ args }}`.
protocol SelectingCommand: ParsableCommand {
    var arguments: [String] { get }
    func run(passthrough: [String]) throws
}

extension SelectingCommand {
    func run() throws { try run(passthrough: []) }
}

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
