import Synchronization

/// What a run's Slurm nodes take from outside the graph: what recent runs
/// learned of them (`LearnedResources`, the rule the sbatch export uses
/// too) and the reporter that measures their tasks (`SlurmTask`). Both are
/// read when the run's first Slurm node is about to start, so a no-op, a
/// dry run and a graph without Slurm read neither.
public struct SlurmRunOptions: Sendable {
    /// Learned memory and time by node name.
    public var learn: @Sendable () -> SlurmExport.Learned = { SlurmExport.Learned() }
    /// moon's own binary, to run on the compute node as `moon --slurm-task`; nil: tasks are not measured.
    public var reporter: @Sendable () -> SlurmTask.Reporter? = { nil }

    public init() {}
}

/// One run's reading of its `SlurmRunOptions`, made at the first Slurm
/// start (each run of watch mode reads anew: it has a launcher of its own).
final class SlurmRunReading: Sendable {
    private let options: SlurmRunOptions
    private let state = Mutex<(learned: SlurmExport.Learned, reporter: SlurmTask.Reporter?)?>(nil)

    init(_ options: SlurmRunOptions) {
        self.options = options
    }

    /// What was learned and the reporter, read at the first call.
    func read() -> (learned: SlurmExport.Learned, reporter: SlurmTask.Reporter?) {
        state.withLock { state in
            if let state { return state }
            let made = (learned: options.learn(), reporter: options.reporter())
            state = made
            return made
        }
    }
}
