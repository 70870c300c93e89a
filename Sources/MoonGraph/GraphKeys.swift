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
        Key("vars", "Variables for ${{ vars.NAME }}; `--set NAME=VALUE` overrides them."),
        Key("env", "Environment variables for every node."),
        Key("dotenv", "Environment files (KEY=VALUE lines) to load, relative to the graph file: a path, or a list of paths and {path, optional}."),
        Key("queues", "Named execution queues; `default` always exists."),
        Key("defaults", "Values applied to every node that does not set its own."),
        Key("cache", "The output cache: {dir, remote, key} (docs/incremental.md, Cache)."),
        Key("nodes", "The nodes: a mapping of name to node."),
    ]

    static let node: [Key] = [
        Key("description", "What the node does."),
        Key("needs", "The nodes that must finish first: a name or a list of names."),
        Key("run", "A command: a string runs in the shell, a list of strings runs a program directly."),
        Key("uses", "A built-in command."),
        Key("with", "The built-in's parameters."),
        Key("env", "Environment variables for this node, over the graph's."),
        Key("dir", "The working directory, relative to the graph file."),
        Key("queue", "The queue the node runs on."),
        Key("timeout", "How long one attempt may run before it is cancelled."),
        Key("retry", "Extra attempts: a number, or {times, delay, backoff, max-delay}."),
        Key("if", "When to run: success (every need succeeded), failure (one failed) or always."),
        Key("continue-on-error", "When true, the node's failure does not fail the run."),
        Key("shell", "The shell for a string `run`: sh or bash."),
        Key("slurm", "Slurm resources overriding the queue's (Slurm queues only)."),
        Key("sources", "Input files (globs relative to the graph file, `**` for any depth): when they, the command, its env and its needs' outputs are unchanged since the last success, the node is skipped as up to date."),
        Key("generates", "Files the node makes (globs relative to the graph file): the node is not up to date while one is missing."),
        Key("depfile", "A Makefile-style dependency file the command writes (gcc -MD -MF, clang, swiftc -emit-dependencies), relative to the node's dir: after a success, the files it lists count as further sources."),
        Key("cache", "false: never restore this node's outputs from the cache nor store them (default true for nodes with sources and generates)."),
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
    ]
}
