import ArgumentParser
import Foundation
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonState

/// `moon run [FILE] [NODE...]`: runs the graph, or only NODEs and their needs.
struct RunCommand: ParsableCommand {
    // `_superCommandName`: `EarlyGraph` parses `moon run`'s arguments with
    // this command as the root, and swift-argument-parser then first parses
    // them twice more, looking for `--generate-completion-script` (~0.5 ms
    // of reflection on the parser's thread at every start), unless the root
    // names a super-command. That request still works: it fails this parse,
    // and the root command's parser, which looks for it, runs next. Help and
    // usage are built from the root command `moon`, as before.
    static let configuration = CommandConfiguration(
        commandName: "run",
        _superCommandName: "moon",
        abstract: "Run a graph, or only the given nodes and what they need.",
        discussion: """
        FILE defaults to moon.yaml or moon.yml in the current directory. The first \
        argument is FILE when it ends in .yaml/.yml or contains a '/'; a bare name is \
        a node of moon.yaml/moon.yml when the current directory has one, even when a \
        file of that name exists (moon run lua runs the node lua beside a built lua; \
        moon run ./lua reads the file), and FILE when there is no default file and a \
        file of that name exists.

        Exit codes: 0 every node succeeded, 1 a node failed, 2 invalid graph or \
        command line, 130 interrupted (SIGINT), 143 terminated (SIGTERM), 129 hung up \
        (SIGHUP), 131 quit (SIGQUIT, Ctrl-\\), 141 stdout closed; the summary then says \
        interrupted, not FAILED. Ctrl-Z stops the nodes with moon; fg resumes them.
        """)

    enum OutputMode: String, ExpressibleByArgument, CaseIterable {
        case auto, tty, plain, json
    }

    enum ColorMode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Argument(help: ArgumentHelp("The graph file, then the nodes to run (default: all).", valueName: "file-or-node"))
    var arguments: [String] = []

    @Option(name: .shortAndLong, help: "Run at most N nodes at once, across all queues.")
    var jobs: Int?

    @Flag(name: .shortAndLong, help: "After a failure, keep running whatever does not depend on it.")
    var keepGoing = false

    @Flag(name: [.customShort("n"), .long], help: "Print the plan in the order it would start, each node marked will run, may run or up to date (as moon status says); start nothing.")
    var dryRun = false

    @Option(help: "How to report: auto (tty on a terminal, else plain), tty, plain or json.")
    var output: OutputMode = .auto

    @Flag(help: "Events as JSON Lines on stdout (same as --output json); refused for a dry run, which has none.")
    var json = false

    @Option(help: "Colour: auto (on a terminal), always (also into pipes) or never (NO_COLOR also turns it off).")
    var color: ColorMode = .auto

    @Option(help: ArgumentHelp("A limit for the whole run, e.g. 10m.", valueName: "duration"))
    var timeout: String?

    @Option(help: ArgumentHelp("How long a cancelled node has between SIGTERM and SIGKILL.", valueName: "duration"))
    var grace: String = "5s"

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a var of the file.", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    @Flag(name: [.customShort("B"), .long], help: "Run every node, also those whose sources are up to date.")
    var force = false

    @Option(name: .customLong("output-mode"), help: "prefixed (each line as it comes, with its node) or grouped (each node's output together when it ends).")
    var outputMode: NodeOutputMode = .prefixed

    @Option(name: .customLong("stall-after"),
            help: ArgumentHelp("On a terminal, mark a running node as stalled after this long without output (0: never).",
                               valueName: "duration"))
    var stallAfter: String = "30s"

    @Flag(name: .shortAndLong, help: "Show only failures and the summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also show each command as it starts.")
    var verbose = false

    /// What the parser read, as plain values (see `RunInvocation`).
    var invocation: RunInvocation {
        RunInvocation(arguments: arguments, jobs: jobs, keepGoing: keepGoing, dryRun: dryRun, output: output, json: json,
                      color: color, timeout: timeout, grace: grace, assignments: assignments, force: force,
                      outputMode: outputMode, stallAfter: stallAfter, quiet: quiet, verbose: verbose)
    }

    func validate() throws {
        try invocation.validate()
    }

    func run() throws {
        try invocation.run()
    }
}
