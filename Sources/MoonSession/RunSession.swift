import Foundation
import MoonCache
import MoonCommand
import MoonGraph
import MoonProcess
import MoonSystem
import MoonReport
import MoonRun
import MoonState

/// Wires one `moon run`: the runner on moon's event loop, real processes,
/// the reporter, and the signals that stop it. Returns the exit code.
package final class RunSession {
    package let plan: Plan
    package let options: RunOptions
    package let report: any ReportChoice
    /// The live view marks a node silent for this long as stalled (0: never).
    package let stallAfter: Duration
    /// The up-to-date check and history.
    package let state: IncrementalState
    package let store: StateStore?
    /// The output cache (nil: `--no-cache`).
    package let cache: OutputCache?
    /// With `--resume`: the last run of the graph.
    package let resume: ResumeRecord?
    /// `--trace PATH`: where the run's Chrome trace is written as it goes.
    package var tracePath: String?
    private var checker: CacheChecker?

    private var graph: Graph { plan.graph }
    /// moon's event loop, and the launcher of the nodes' processes on it.
    private let main: SessionHost
    private var processes: any ProcessGroups { main.processes }
    /// Where the run is reported (stdout).
    private let sink: OutputSink

    package init(plan: Plan, options: RunOptions, report: any ReportChoice, stallAfter: Duration, state: IncrementalState, store: StateStore?,
         cache: OutputCache? = nil, resume: ResumeRecord? = nil, main: SessionHost, sink: OutputSink = .standardOutput) {
        self.main = main
        self.sink = sink
        self.cache = cache
        self.resume = resume
        self.plan = plan
        self.options = options
        self.report = report
        self.stallAfter = stallAfter
        self.state = state
        self.store = store
    }

    /// Runs the plan to its end, or until a signal stops it; throws a
    /// `CLIError` when the run cannot start.
    package func run() throws -> Int32 {
        // The runner, its commands and the reporter live on moon's event
        // loop: a child's exit, the runner's decision and the next spawn
        // happen there without a thread hand-off.
        let main = self.main
        // The checks' files are stat'ed ahead on a second thread while the run is set up.
        state.expectChecks(of: plan.selected)
        // moon reaps (and can kill) whatever its nodes leave behind.
        try? processes.becomeSubreaper()
        let sink = self.sink
        let reporter = report.reporter(sink: sink, scheduler: main.scheduler, stallAfter: stallAfter)
        let traceFile = try tracePath.map { try openTrace($0) }
        // The history keeps a trace of each run that ran something.
        let traceRecorder = store == nil ? nil : TraceRecorder()
        let runner = makeRunner(scheduler: main.scheduler, reporter: reporter, also: [traceFile as Reporter?, traceRecorder].compactMap { $0 })
        var summary: Runner.Summary?
        /// A stop signal that came while the outputs were stored, after the nodes ended.
        var storeInterrupted: Int32?
        runner.onFinish = { [state, cache] (result: Runner.Summary) in
            // Still on the loop, where the reporter and the state live.
            reporter.finish()
            if let traceFile, traceFile.failure != 0, let path = self.tracePath {
                warn("cannot write the trace \(path) (\(String(cString: strerror(traceFile.failure)))): it is incomplete")
            }
            state.flush()
            summary = result
            // A thread only when something is being stored (a run that stored nothing has nothing to wait for).
            guard let cache, cache.isStoring else { return main.finish() }
            // The stores end off the loop, which meanwhile hears a stop signal (and cancels them).
            let finishing = {
                cache.finish()
                main.scheduler.schedule { main.finish() }
            }
            if !BackgroundThread.start(name: "moon.cache", finishing) { finishing() }
        }
        stopWhenStdoutCloses(sink, runner: runner, scheduler: main.scheduler)
        // A stop signal stops the run cleanly. Ctrl-Z (SIGTSTP) stops the
        // nodes too, and `fg` (SIGCONT) resumes them.
        try main.onSignals(MainLoop.stopSignals + [SIGTSTP, SIGCONT]) { [processes] number in
            switch number {
            case SIGTSTP: processes.suspend()
            case SIGCONT: processes.resume()
            default:
                self.cache?.interrupt()
                if summary != nil, storeInterrupted == nil, self.cache != nil { storeInterrupted = number }
                runner.stop(Runner.StopReason.interrupt(signal: number))
            }
        }
        main.run { runner.start() }
        finish(summary, trace: traceRecorder)
        if let storeInterrupted {
            warn("interrupted while storing outputs in the cache \(cache?.directory.path ?? ""): what was not stored yet is not")
            return 128 + storeInterrupted
        }
        switch summary?.stopReason {
        case .interrupt(let number)?: return 128 + number
        default: return summary?.ok == true ? 0 : 1
        }
    }

    /// The runner of the plan, reporting to `reporter`, asking the state
    /// store which nodes are up to date.
    private func makeRunner(scheduler: DateScheduler, reporter: Reporter, also others: [Reporter]) -> Runner {
        let runPlan = RunPlan(graph: graph, plan: plan, cpus: LinuxCalls.processorCount())
        let secrets = SecretValues.read(for: graph)
        let terminal = TerminalHandover(reporter: reporter, scheduler: scheduler)
        let nodes = main.nodeLauncher(graph: graph, plan: plan)
            ?? CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler, grace: options.grace, secrets: secrets,
                               terminal: terminal.processTerminal, slurm: options.slurm)
        let runner = Runner(plan: runPlan, options: options, launcher: nodes, scheduler: scheduler) { event in
            reporter.report(event)
            for other in others { other.report(event) }
        }
        runner.secretMask = secrets.mask
        runner.terminal = terminal
        let checker = CacheChecker(inner: StoreChecker(state: state, plan: plan), state: state, plan: plan, cache: cache, resume: resume)
        self.checker = checker
        runner.upToDate = checker
        // A huge source is hashed off the loop, and a stop cuts it short.
        let interruption = runner.checkInterruption
        checker.interruption = interruption
        state.shouldStop = { interruption.shouldStop }
        return runner
    }

    /// The `--trace` file, made (or emptied) before anything runs.
    private func openTrace(_ path: String) throws -> TraceFileReporter {
        do {
            try OutputPath.refuseToReplace(path, graphPath: graph.path, writes: "--trace")
        } catch let error as CLIError {
            throw CLIError(error.message, exitCode: 1)
        }
        // O_NONBLOCK: a FIFO nobody reads is an error now, not a wait before the run.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            let reason = errno == ENXIO ? "it is a FIFO or socket that nobody reads" : String(cString: strerror(errno))
            throw CLIError("cannot write the trace \(path): \(reason)",
                           help: "give --trace a path in a directory that exists and that you can write", exitCode: 1)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return TraceFileReporter(sink: OutputSink(fd: fd), needs: TraceNeeds.of(graph))
    }

    /// `moon run --json | head -1`: the reader is gone, so stop and clean up.
    private func stopWhenStdoutCloses(_ sink: OutputSink, runner: Runner, scheduler: DateScheduler) {
        // Asynchronously: the sink notices it inside a write, that is inside
        // the runner's own emit (say, of a `start` event before the node's
        // handle is recorded); stopping there would miss that node.
        sink.onBrokenPipe = { scheduler.schedule { runner.stop(Runner.StopReason.interrupt(signal: SIGPIPE)) } }
        // Also when the nodes are silent and nothing is written to notice it.
        sink.notifyWhenReaderCloses(on: scheduler)
    }

    /// After the run: its outputs directory removed, its history recorded,
    /// whatever its nodes left behind killed.
    private func finish(_ summary: Runner.Summary?, trace: TraceRecorder?) {
        // Every node's processes are gone (a node ends only then): the
        // `$MOON_OUTPUT` directory can go. After a stop: at exit, once
        // `killAll` ran.
        if summary?.stopReason == nil { OutputDirectory.removeAll() }
        // For bench/uptodate.py: what the up-to-date checks cost.
        if Terminal.variable("MOON_STATE_STATS") == "1" {
            let (hashed, reused) = state.statistics
            let ms = String(format: "%.1f", state.checkSeconds * 1000)
            // Its own line: tools read the counts from the end of the other.
            if store?.readFromSnapshot == true { Console.errorLine("moon: state: node states from the no-op snapshot") }
            Console.errorLine("moon: state: checks took \(ms) ms; \(hashed) files hashed, \(reused) from the stat cache")
        }
        if let store, let summary {
            HistoryRecorder.save(summary, state: state, in: store,
                                 trace: summary.ranNothing ? nil : trace?.model(graph: graph).map(TraceRecordText.encode))
            // The next run reads the node states from a snapshot (one read
            // stands while the store is unchanged: none is written then).
            store.saveNoopSnapshot(graph: state.graphKey)
            do {
                try checker?.resumeRecord(summary).save(graphDirectory: graph.directory, graphKey: state.graphKey)
            } catch {
                // Silence here would make the next `--resume` say "no earlier run" with no reason.
                warn("cannot save the resume record \(ResumeRecord.path(graphDirectory: graph.directory, graphKey: state.graphKey)); 'moon run --resume' will run every node")
            }
        }
        // A signal from here on stops nothing: the loop no longer runs.
        processes.killAll()
    }
}
