import ArgumentParser

/// `moon run [FILE] [NODE...]`: runs the graph, or only NODEs and their needs.
/// This is the one definition of `run`'s command line (its names, help and
/// errors); the run itself reads the `RunRequest` it makes. `FastLine`
/// reads the common lines to the same value without argument-parser, and
/// its tests hold it to this definition.
struct RunCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a graph, or only the given nodes and what they need.",
        discussion: """
        FILE defaults to the nearest moon.yaml or moon.yml: in the current directory \
        or the closest one above it (paths in it stay relative to it). The first \
        argument is FILE when it ends in .yaml/.yml or contains a '/'; a bare name is \
        a node of that default file when there is one, even when a file of that name \
        exists (moon run lua runs the node lua beside a built lua; moon run ./lua \
        reads the file), and FILE when there is no default file and a file of that \
        name exists.

        Without NODE, moon runs the file's default: nodes, else every node. A NODE is \
        a name, a fan-out's name (all its instances) or a quoted glob over names \
        ('test[*]', 'lib:*'; * any characters, ? one). NAME=VALUE after a node sets \
        its parameter (moon run deploy env=prod version=1.4); the words after -- go \
        to the last node named, as ${{ args }} (moon run test -- -k fast). \
        --exclude PATTERN takes nodes out of the selection; a node that a selected \
        node needs still runs. internal: nodes run only when needed.

        Exit codes: 0 every node succeeded, 1 a node failed, 2 invalid graph or \
        command line, 130 interrupted (SIGINT), 143 terminated (SIGTERM), 129 hung up \
        (SIGHUP), 131 quit (SIGQUIT, Ctrl-\\), 141 stdout closed; the summary then says \
        interrupted, not FAILED. Ctrl-Z stops the nodes with moon; fg resumes them.

        A fan-out's line counts its instances: ✓ test 24/24 2.1s, ✓ test 24/24 up to \
        date, ✓ test 24/24 (20 up to date, 1 restored) 1.2s, ✗ test 21/24 (1 failed, \
        2 canceled) 3.4s. The last line counts nodes and instances by how they ended: \
        moon: ok - 3 succeeded, 29 up to date in 1.2s. -v, -n, the failure summary and \
        the start event show each command whole, with its known values put in.
        """)

    @Argument(help: ArgumentHelp("The graph file, then the nodes to run, each followed by its NAME=VALUE parameters "
                                 + "(default: the file's default:, else all). After --, words for the last node's ${{ args }}.",
                                 valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    /// `-j8` as make and ninja users type it, and `-j 8`.
    @Option(name: [.customShort("j", allowingJoined: true), .long], help: "Run at most N nodes at once, across all queues.")
    var jobs: Int?

    @Flag(name: .shortAndLong, help: "After a failure, keep running whatever does not depend on it.")
    var keepGoing = false

    @Flag(name: .shortAndLong, help: "Answer yes to every confirm: question without asking (needed where moon has no terminal).")
    var yes = false

    @Flag(name: [.customShort("n"), .long], help: "Print the plan in the order it would start, each node marked will run, may run or up to date (as moon status says); start nothing.")
    var dryRun = false

    @OptionGroup var report: ReportOptions

    @Option(help: ArgumentHelp("A limit for the whole run, e.g. 10m.", valueName: "duration"))
    var timeout: String?

    @Option(help: ArgumentHelp("How long a cancelled node has between SIGTERM and SIGKILL.", valueName: "duration"))
    var grace: String = RunRequest().grace

    @OptionGroup var vars: VarOverrides

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Rerun only what failed, was canceled or skipped in the last run; the rest keeps that run's outputs and values.")
    var resume = false

    @OptionGroup var selection: SelectionOptions
    @OptionGroup(title: "Watch mode") var watch: WatchOptions

    @Flag(name: [.customShort("B"), .long], help: "Run every node, also those whose sources are up to date.")
    var force = false

    @Flag(name: .customLong("force-only"),
          help: "Run the nodes named on the command line even when up to date, as -B does, but not their needs: those run only when not up to date.")
    var forceOnly = false

    @Option(name: .customLong("stall-after"),
            help: ArgumentHelp("On a terminal, mark a running node as stalled after this long without output (0: never).",
                               valueName: "duration"))
    var stallAfter: String = RunRequest().stallAfter

    @Option(help: ArgumentHelp("The memory budget for nodes that declare resources: {memory} (e.g. 8G; default: MOON_MEMORY, else what is available when the run starts).",
                               valueName: "size"))
    var memory: String?

    @Option(name: .customLong("trace"),
            help: ArgumentHelp("Write the run's Chrome trace (Perfetto, chrome://tracing) to this file as it goes; see moon trace.",
                               valueName: "path"))
    var trace: String?

    func validate() throws { try request(passthrough: []).validate() }

    /// The values of the options, as the run reads them (`FastLine` reads
    /// the same value from the command line on its fast path).
    func request(passthrough: [String]) -> RunRequest {
        RunRequest(arguments: arguments, passthrough: passthrough, jobs: jobs, keepGoing: keepGoing, dryRun: dryRun,
                   report: report.settings, timeout: timeout, grace: grace, assignments: vars.assignments, cache: cache.settings,
                   resume: resume, exclude: selection.exclude, watch: watch.settings, force: force, forceOnly: forceOnly,
                   stallAfter: stallAfter, memory: memory, yes: yes, trace: trace)
    }

    /// `passthrough`: the words after `--` that follow a NODE (`Moon.parse`), for the last node's `${{ args }}`.
    func run(passthrough: [String]) throws {
        try request(passthrough: passthrough).run()
    }
}
