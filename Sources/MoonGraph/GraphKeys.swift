/// The keys of each mapping of the graph file, with what they mean: the
/// decoder's strict-key check and `GraphSchema` both read these lists.
enum GraphKeys {
    struct Key: Sendable {
        var name: String
        var description: String
        init(_ name: String, _ description: String) {
            self.name = name
            self.description = description
        }
    }

    static let top: [Key] = [
        Key("version", "The file format version; must be 1."),
        Key("name", "The graph's name (default: the file's stem)."),
        Key("description", "What the graph does."),
        Key("default", "What `moon run` and plain `moon` run when no node is named: a node name or a list of them."),
        Key("includes", "Other graph files whose nodes join this graph as NAME:NODE: a mapping of NAME to a path, or to {file, vars}."),
        Key("vars", "Variables for ${{ vars.NAME }}: a string, or a list (each item one word where interpolated); a value may use other vars; `--set NAME=VALUE` overrides them."),
        Key("env", "Environment variables for every node."),
        Key("dotenv", "Environment files (KEY=VALUE lines) to load, relative to the graph file: a path, or a list of paths and {path, optional}."),
        Key("queues", "Named execution queues; `default` always exists."),
        Key("defaults", "Values applied to every node that does not set its own."),
        Key("cache", "The output cache: {dir, remote, key} (docs/incremental.md, Cache)."),
        Key("secrets", "Secrets for ${{ secrets.NAME }}: a mapping of NAME to {env: VAR} or {file: PATH}, with optional required: false; read by each run, masked as *** in everything moon writes (docs/secrets.md)."),
        Key("nodes", "The nodes: a mapping of name to node."),
    ]

    static let node: [Key] = [
        Key("description", "What the node does."),
        Key("needs", "The nodes that must finish first: a name or a list of names (a for-each or matrix name means every instance, NAME[LABEL] one; :NAME a node of the root graph, from an included file)."),
        Key("run", "A command: a string runs in the shell, a list of strings runs a program directly. A node with neither run nor uses is a group of its needs."),
        Key("uses", "A built-in command."),
        Key("with", "The built-in's parameters."),
        Key("env", "Environment variables for this node, over the graph's."),
        Key("dir", "The working directory, relative to the graph file."),
        Key("queue", "The queue the node runs on."),
        Key("timeout", "How long one attempt may run before it is cancelled."),
        Key("retry", "Extra attempts: a number, or {times, delay, backoff, max-delay}."),
        Key("if", "When to run: success (every need succeeded), failure (one failed) or always."),
        Key("continue-on-error", "When true, the node's failure does not fail the run."),
        Key("priority", "An integer from -10 to 10 (default 0): among nodes ready to start, a higher one starts first, and so do the nodes it needs; among equals, the longest remaining path (recorded durations) first."),
        Key("success-codes", "The exit codes that count as success, e.g. [0, 5] for pytest's 'no tests collected' (default [0]); integers 0–255."),
        Key("shell", "The shell for a string `run`: sh or bash."),
        Key("slurm", "Slurm resources overriding the queue's (Slurm queues only)."),
        Key("resources", "What the node needs to start: {memory: 2G, cpus: 2}; it starts only when its memory fits in the run's budget (--memory) beside what runs, and takes cpus slots of -j and of its queue."),
        Key("sources", "Input files (globs relative to the graph file, `**` for any depth; a directory means every file below it, hidden ones included, not .git or .moon; the node's own generates are left out): when they, the command, its env, the vars it reads and its needs' outputs are unchanged since the last success, the node is skipped as up to date."),
        Key("generates", "Files the node makes (globs relative to the graph file; a directory is taken whole, as sources read it): the node is not up to date while one is missing. Two nodes may not generate one path."),
        Key("depfile", "A Makefile-style dependency file the command writes (gcc -MD -MF, clang, swiftc -emit-dependencies), relative to the node's dir: after a success, the files it lists count as further sources."),
        Key("cache", "false: never restore this node's outputs from the cache nor store them (default true for nodes with sources; one without generates is remembered as passed for its inputs)."),
        Key("for-each", "Run one instance per item, named NODE[ITEM]: a list, {glob, exclude, allow-empty} (files relative to the graph file), or ${{ needs.X.outputs.KEY }} (a JSON list, expanded at run time); read as ${{ item }}, item.name, item.stem, item.ext, item.dir."),
        Key("matrix", "Run one instance per combination, named NODE[V1,V2]: {KEY: [VALUE, …], include: [{…}], exclude: [{…}]} as in GitHub Actions; read as ${{ matrix.KEY }}."),
        Key("params", "Named parameters, set on the command line as NAME=VALUE after the node: {NAME: {default: VALUE}} or {NAME: {required: true, description: TEXT}}; read as ${{ params.NAME }}."),
        Key("internal", "When true, the node is hidden from `moon list` and cannot be selected by name or pattern; it runs as a need."),
        Key("service", "When true, the node is not expected to end (a dev server): its dependents start once it has started (a wait-for need says when it is ready), and moon stops it (SIGTERM, grace) when nothing else is left, which is not a failure."),
        Key("restart", "Watch mode: on-change (default) restarts the node when its inputs change while it runs; never leaves a service running (one that reloads by itself)."),
        Key("interactive", "When true, the node gets moon's terminal: it reads what is typed, and on the live view writes to the terminal itself (the view steps aside). One interactive node runs at a time; without a terminal it reads moon's standard input."),
        Key("confirm", "A question asked on the terminal (y/N) before the node starts, once its needs succeeded and only if it is to run; declined, it and its dependents are skipped and the run fails. --yes answers yes; without a terminal and without --yes the node fails at once."),
    ]

    /// A word another tool (Snakemake, make, go-task, GitHub Actions) uses
    /// for a key: what moon calls it, and how to write it.
    struct Synonym: Sendable {
        var suggestion: String?
        var help: String
    }

    /// Node keys of other tools: an unknown key found here gets this hint
    /// rather than a spelling suggestion ('resources' is not 'sources').
    static let nodeSynonyms: [String: Synonym] = {
        let sources = Synonym(suggestion: "sources", help: "help: 'sources' are the files a node reads (Snakemake's input); its globs decide whether it is up to date")
        let generates = Synonym(suggestion: "generates", help: "help: 'generates' are the files a node writes (Snakemake's output)")
        let needs = Synonym(suggestion: "needs", help: "help: 'needs' names the nodes that must finish first")
        let run = Synonym(suggestion: "run", help: "help: 'run' holds the command: a string runs in the shell ('shell' names which: sh or bash)")
        let dir = Synonym(suggestion: "dir", help: "help: 'dir' is the working directory, relative to the graph file")
        let resources = Synonym(suggestion: "resources", help: "help: 'resources' says what a node needs to start: resources: {memory: 2G, cpus: 2}")
        return ["input": sources, "inputs": sources, "output": generates, "outputs": generates,
                "deps": needs, "depends": needs, "depends_on": needs, "depends-on": needs, "dependencies": needs, "requires": needs,
                "cmd": run, "cmds": run, "command": run, "commands": run, "script": run,
                "cwd": dir, "workdir": dir, "working_dir": dir, "working-directory": dir,
                "threads": resources, "cpus": resources, "mem": resources, "mem_mb": resources]
    }()

    static let forEach: [Key] = [
        Key("glob", "Files matching this glob, relative to the graph file, one instance each (sorted)."),
        Key("exclude", "Globs of files to leave out."),
        Key("allow-empty", "When true, a glob that matches nothing makes no instance instead of an error."),
    ]

    static let parameter: [Key] = [
        Key("default", "The value when the command line gives none."),
        Key("required", "When true, the command line must give a value (NAME=VALUE)."),
        Key("description", "What the parameter is, shown when it is missing."),
    ]

    static let include: [Key] = [
        Key("file", "The included graph file, relative to this one."),
        Key("vars", "Values for the included file's vars, over its own."),
    ]

    static let queue: [Key] = [
        Key("concurrency", "How many nodes run at once: a positive integer or auto (the number of CPUs)."),
        Key("executor", "Where nodes run: local or slurm."),
        Key("slurm", "Slurm resources for every node of the queue (executor: slurm)."),
    ]

    static let slurm: [Key] = [
        Key("partition", "The Slurm partition."),
        Key("cpus-per-task", "CPUs per task."),
        Key("mem", "Memory, e.g. 4G or 512M."),
        Key("time", "Time limit, e.g. 30, 1:00:00 or 1-00:00:00."),
        Key("account", "The account to charge."),
        Key("args", "Extra srun arguments."),
    ]

    static let retry: [Key] = [
        Key("times", "Extra attempts after the first."),
        Key("delay", "The wait before the first retry (default 0s)."),
        Key("backoff", "Each further wait is this many times longer (≥ 1, default 1)."),
        Key("max-delay", "The longest wait between attempts."),
    ]

    static let cache: [Key] = [
        Key("dir", "The cache directory (default $XDG_CACHE_HOME/moon or ~/.cache/moon), relative to the graph file."),
        Key("remote", "A Bazel HTTP remote cache URL (GET/PUT URL/ac/… and URL/cas/…)."),
        Key("key", "Strings that make cached outputs specific, e.g. a compiler version."),
    ]

    static let secret: [Key] = [
        Key("env", "The environment variable of moon's environment that holds the value (dotenv files are not read for secrets)."),
        Key("file", "The file that holds the value, relative to the graph file (trailing line breaks dropped)."),
        Key("required", "false: a missing value is the empty string; by default a node that reads a missing secret fails before it starts."),
    ]

    static let dotenv: [Key] = [
        Key("path", "The file, relative to the graph file."),
        Key("optional", "When true, a missing file is skipped instead of an error."),
    ]

    static let defaults: [Key] = [
        Key("queue", "The queue of nodes that do not name one."),
        Key("timeout", "The timeout of nodes that do not set one."),
        Key("retry", "The retry policy of nodes that do not set one."),
        Key("shell", "The shell of nodes that do not set one: sh or bash."),
        Key("dir", "The working directory of nodes that do not set one."),
        Key("continue-on-error", "The continue-on-error of nodes that do not set it."),
        Key("if", "The condition of nodes that do not set one."),
        Key("success-codes", "The success-codes of nodes that do not set them."),
        Key("resources", "The resources of nodes that do not set them (each key apart)."),
    ]

    /// Snakemake's and Slurm's words inside `resources:`.
    static let resourceSynonyms: [String: Synonym] = {
        let memory = Synonym(suggestion: "memory", help: "help: 'memory' takes a size with its unit: memory: 100M")
        let cpus = Synonym(suggestion: "cpus", help: "help: 'cpus' is how many slots of -j the node takes")
        return ["mem": memory, "mem_mb": memory, "mem_gb": memory, "ram": memory, "threads": cpus, "cores": cpus, "cpu": cpus,
                "cpus-per-task": cpus]
    }()

    static let resources: [Key] = [
        Key("memory", "Memory the node needs, with a unit: 512M, 2G, 1.5GiB (powers of 1024)."),
        Key("cpus", "How many slots the node takes, of -j and of its queue's concurrency (default 1)."),
    ]
}
