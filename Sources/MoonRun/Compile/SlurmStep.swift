import Foundation
import MoonCommand
import MoonGraph
import MoonProcess
import MoonEvents
import Synchronization

/// One attempt of a node on a Slurm queue. The node's process becomes an
/// `srun` job step (`SlurmCommandLine`); this reads srun's stderr for the job
/// id and the task's wait status, hides srun's own chatter, decides how the
/// attempt ended, and cancels the job with `scancel` when moon stopped it.
///
/// Why `srun` and not `sbatch`: srun allocates at once, streams the task's
/// output live and ends with the task (about 36 ms per job on a one-node
/// cluster), so a Slurm node behaves like a local one; `sbatch` would need
/// polling with a one-second scheduler tick (see docs/slurm.md).
///
/// Threading: `read` and `termination` run on the process launcher's thread
/// (serially for one process); `jobID` may be read from anywhere.
final class SlurmStep: @unchecked Sendable {
    /// What to do with one line srun wrote to stderr.
    enum Line: Equatable {
        /// The task's own output (or an srun error worth showing): deliver it.
        case keep
        /// srun's progress chatter: drop it.
        case drop
        /// srun named the job; deliver the line too when `keep`.
        case job(String, keep: Bool)
    }

    let options: SlurmOptions
    let jobName: String
    let queue: String
    let node: String
    private let programs: ProgramCache
    /// moon's binary and the file its `--slurm-task` reporter writes the task's usage to (nil: not measured).
    private let reporter: SlurmTask.Reporter?
    private let usageFile: String?
    private let lock = Mutex(())
    private var job: String?
    private var taskStatus: Int32?
    private var lastError: String?

    init(options: SlurmOptions, graph: String, node: String, queue: String, programs: ProgramCache,
         reporter: SlurmTask.Reporter? = nil, usageFile: String? = nil) {
        self.options = options
        self.programs = programs
        self.reporter = usageFile == nil ? nil : reporter
        self.usageFile = reporter == nil ? nil : usageFile
        self.jobName = SlurmCommandLine.jobName(graph: graph, node: node)
        self.queue = queue
        self.node = node
    }

    /// The Slurm job id, once srun has printed it.
    var jobID: String? { lock.withLock { _ in job } }

    /// `spec` run through `srun`: the same command, environment and
    /// directory, as a job step. Throws a `spawn` `NodeError` when srun is
    /// not on the node's PATH.
    func wrap(_ spec: ProcessSpec) throws -> ProcessSpec {
        var environment = spec.environment
        for name in SlurmCommandLine.inheritedJobVariables { environment[name] = nil }
        let path = environment["PATH"] ?? ProcessSpec.defaultSearchPath
        guard let srun = find("srun", path: path) else {
            throw NodeError(.spawn, "cannot run node '\(node)' on Slurm (queue '\(queue)' has executor: slurm): srun was not found on PATH (\(path)); install the Slurm client or run on a cluster's login node")
        }
        let directory = spec.workingDirectory ?? FileManager.default.currentDirectoryPath
        var command = [spec.executable] + spec.arguments
        if let reporter, let usageFile {
            command = SlurmTask.srunCommand(reporter: reporter, usageFile: usageFile, command: command)
        }
        let arguments = SlurmCommandLine.srunArguments(options: options, jobName: jobName, directory: directory, command: command)
        return ProcessSpec(executable: srun, arguments: arguments, environment: environment, workingDirectory: directory)
    }

    /// Sorts one stderr line of srun: the task's lines pass, srun's progress
    /// lines (from `--verbose`) are dropped, the job id and the task's wait
    /// status are remembered. A task line that itself starts with `srun: `
    /// is taken for srun's (documented in docs/slurm.md).
    func read(_ text: String) -> Line {
        guard text.hasPrefix("srun: ") else {
            // slurmstepd's notice that moon cancelled the step.
            if text.hasPrefix("slurmstepd"), text.contains("*** "), text.contains("CANCELLED") { return .drop }
            return .keep
        }
        let message = text.dropFirst(6)
        if let id = Self.number(after: "jobid ", in: message) {
            return remember(job: id, keep: false)
        }
        if let id = Self.number(after: "job ", in: message), message.contains("queued and waiting for resources") {
            return remember(job: id, keep: false)
        }
        if message.contains("Received task exit notification"), let status = Self.waitStatus(in: message) {
            lock.withLock { _ in taskStatus = status }
            return .drop
        }
        for level in ["error: ", "fatal: "] where message.hasPrefix(level) {
            let detail = message.dropFirst(level.count)
            // `srun: error: host: task 0: Exited with exit code 3`: moon reports that itself.
            if Self.isTaskReport(detail) { return .drop }
            lock.withLock { _ in lastError = String(detail) }
            return .keep
        }
        if message.hasPrefix("warning: ") { return .keep }
        return .drop
    }

    /// How the attempt ended, from srun's exit and what srun reported. The
    /// task's own wait status wins (srun turns a signal into 128+n); srun
    /// failing before there was a job is a `spawn` error with srun's reason.
    func termination(for srun: Termination, canceled: Bool) -> Result<Termination, NodeError> {
        let (job, status, error) = lock.withLock { _ in (self.job, self.taskStatus, self.lastError) }
        if let status {
            let signal = status & 0x7f
            return .success(signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal))
        }
        if job == nil, !canceled, srun != .exited(0) {
            let reason = error ?? "srun ended with \(srun) before Slurm allocated the job"
            return .failure(NodeError(.spawn, "cannot run node '\(node)' on Slurm (queue '\(queue)'): \(reason)"))
        }
        return .success(srun)
    }

    /// After srun has ended: when moon cancelled the attempt or srun was
    /// killed, `scancel` the job, so nothing stays queued or running (srun
    /// killed with SIGKILL cannot withdraw a pending job itself). Calls
    /// `then` when scancel has finished, or at once when there is nothing to do.
    func cleanUp(after srun: Termination, canceled: Bool, environment: [String: String],
                 processes: ProcessLaunching, then: @escaping @Sendable () -> Void) {
        var killed = false
        if case .signaled = srun { killed = true }
        guard canceled || killed, let job = jobID else {
            then()
            return
        }
        let scancel = find("scancel", path: environment["PATH"] ?? ProcessSpec.defaultSearchPath) ?? "scancel"
        let spec = ProcessSpec(executable: scancel, arguments: ["--quiet", job], environment: environment)
        do {
            _ = try processes.launch(spec, onOutput: { _ in }, onExit: { _ in then() })
        } catch {
            then()
        }
    }

    /// What the task used, from the reporter's file (removed); nil when it wrote none.
    func takeUsage() -> ProcessUsage? {
        usageFile.flatMap(SlurmTask.take)
    }

    // MARK: - Parsing srun's lines

    /// The digits right after `prefix` at the start of `text`, if any.
    static func number(after prefix: String, in text: Substring) -> String? {
        guard text.hasPrefix(prefix) else { return nil }
        let digits = text.dropFirst(prefix.count).prefix(while: { $0.isASCII && $0.isNumber })
        return digits.isEmpty ? nil : String(digits)
    }

    /// `(status=0x0300)` in `_task_finish: Received task exit notification …`.
    static func waitStatus(in text: Substring) -> Int32? {
        guard let range = text.range(of: "status=0x") else { return nil }
        let hex = text[range.upperBound...].prefix(while: { $0.isHexDigit })
        return Int32(hex, radix: 16)
    }

    /// `host: task 0: Exited with exit code 3`, `host: tasks 0-1: Killed`.
    static func isTaskReport(_ text: Substring) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let rest = text[text.index(after: colon)...].drop(while: { $0 == " " })
        return rest.hasPrefix("task ") || rest.hasPrefix("tasks ")
    }

    private func remember(job id: String, keep: Bool) -> Line {
        let first: Bool = lock.withLock { _ in
            if job != nil { return false }
            job = id
            return true
        }
        return first ? .job(id, keep: keep) : (keep ? .keep : .drop)
    }

    private func find(_ program: String, path: String) -> String? {
        programs.lookup(program, path: path)
    }
}
