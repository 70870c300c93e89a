import MoonGraph

/// The command lines moon hands to Slurm: `srun` for a node that runs on a
/// Slurm queue, and the resource options `sbatch` shares with it. Pure
/// functions of the node's options, so the tests read them directly.
public enum SlurmCommandLine {
    /// `moon.<graph>.<node>`: what `squeue` shows, so a user can tell whose job it is.
    public static func jobName(graph: String, node: String) -> String {
        "moon." + sanitized(graph) + "." + node
    }

    /// Slurm stores job names as text; moon keeps them one word of printable ASCII.
    static func sanitized(_ name: String) -> String {
        String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar.value > 32 && scalar.value < 127 && scalar != "," && scalar != "'" && scalar != "\""
                ? Character(scalar) : "_"
        })
    }

    /// `--partition=…`, `--cpus-per-task=…`, `--mem=…`, `--time=…`,
    /// `--account=…`, then `args` unchanged: the same for `srun` and `sbatch`.
    public static func resourceArguments(_ options: SlurmOptions) -> [String] {
        var arguments: [String] = []
        if let partition = options.partition { arguments.append("--partition=" + partition) }
        if let cpus = options.cpusPerTask { arguments.append("--cpus-per-task=" + String(cpus)) }
        if let mem = options.mem { arguments.append("--mem=" + mem) }
        if let time = options.time { arguments.append("--time=" + time) }
        if let account = options.account { arguments.append("--account=" + account) }
        return arguments + options.args
    }

    /// The arguments of `srun` (after `argv[0]`) that run `command` as a job
    /// step of its own:
    ///
    /// - `--verbose` makes srun print the job id (`srun: jobid N: …`) as soon
    ///   as the job is allocated, and the task's wait status when it ends;
    ///   `SlurmStep` reads both from srun's stderr and drops srun's chatter.
    /// - `--export=ALL`: the node's environment is srun's own environment,
    ///   so the task gets exactly it (plus Slurm's `SLURM_*` variables).
    /// - `--chdir`: the node's working directory, on the compute node.
    /// - `--` ends srun's options: the command is passed on unchanged.
    public static func srunArguments(options: SlurmOptions, jobName: String, directory: String, command: [String]) -> [String] {
        ["--verbose", "--job-name=" + jobName, "--chdir=" + directory, "--export=ALL"]
            + resourceArguments(options) + ["--"] + command
    }

    /// Variables that make `srun` start a step inside an existing allocation
    /// (when moon itself runs inside `salloc` or a batch job). moon removes
    /// them from srun's environment: each node is a job of its own, and
    /// cancelling it must never cancel the allocation moon runs in.
    public static let inheritedJobVariables = ["SLURM_JOB_ID", "SLURM_JOBID"]
}
