import Dispatch
import Foundation
import MoonCommand
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonState

/// Wires one `moon run`: the runner on moon's event loop, real processes,
/// the reporter, and the signals that stop it. Returns the exit code.
final class RunSession {
    enum ReporterKind {
        case tty, plain, json
    }

    var outputMode: NodeOutputMode = .prefixed
    /// The live view marks a node silent for this long as stalled (0: never).
    var stallAfter: Duration = .seconds(30)
    var color = false

    let graph: Graph
    let plan: Plan
    let options: RunOptions
    let reporterKind: ReporterKind
    let verbosity: PlainReporter.Verbosity
    /// The up-to-date check and history (nil: run everything, record nothing).
    let state: IncrementalState?
    let store: StateStore?

    init(graph: Graph, plan: Plan, options: RunOptions, reporterKind: ReporterKind, verbosity: PlainReporter.Verbosity,
         state: IncrementalState? = nil, store: StateStore? = nil) {
        self.graph = graph
        self.plan = plan
        self.options = options
        self.reporterKind = reporterKind
        self.verbosity = verbosity
        self.state = state
        self.store = store
    }

    func run() -> Int32 {
        // A closed stdout is noticed by the sink, not by a SIGPIPE.
        LinuxCalls.ignoreSignal(SIGPIPE)
        // The runner, its commands and the reporter live on moon's event
        // loop: a child's exit, the runner's decision and the next spawn
        // happen there without a thread hand-off. The loop is this thread
        // (it has nothing else to do until the run ends), unless it already
        // runs on a thread of its own.
        let processes = ProcessLauncher.shared
        let loop: EventLoop
        let ownLoop: EventLoop?
        do {
            ownLoop = try processes.adoptEventLoop()
            loop = try ownLoop ?? processes.eventLoop()
        } catch {
            Console.error("\(error)")
            return 1
        }
        let scheduler = LoopScheduler(loop: loop)
        // moon reaps (and can kill) whatever its nodes leave behind.
        try? ProcessLauncher.becomeSubreaper()
        let cpus = LinuxCalls.processorCount()
        let runPlan = RunPlan(graph: graph, plan: plan, cpus: cpus)
        let nodes = CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler, grace: options.grace)

        let sink = OutputSink.standardOutput
        let reporter: Reporter
        switch reporterKind {
        case .json: reporter = JSONLinesReporter(sink: sink)
        case .plain: reporter = PlainReporter(sink: sink, verbosity: verbosity, outputMode: outputMode, color: color)
        case .tty:
            reporter = TTYReporter(sink: sink, options: TTYReporter.Options(verbosity: verbosity, outputMode: outputMode, color: color,
                                                                         stallAfter: stallAfter),
                                   scheduler: scheduler)
        }
        let runner = Runner(plan: runPlan, options: options, launcher: nodes, scheduler: scheduler) { event in
            reporter.report(event)
        }
        if let state {
            runner.upToDate = StoreChecker(state: state, plan: plan)
            // A huge source is hashed off the loop, and a stop cuts it short.
            let interruption = runner.checkInterruption
            ContentHash.shouldStop = { interruption.shouldStop }
        }

        let done = DispatchSemaphore(value: 0)
        var summary: Runner.Summary?
        runner.onFinish = { [state] (result: Runner.Summary) in
            // Still on the loop, where the reporter and the state live.
            reporter.finish()
            state?.flush()
            summary = result
            if ownLoop == nil { done.signal() }
        }
        // `moon run --json | head -1`: the reader is gone, so stop and clean up.
        // Asynchronously: the sink notices it inside a write, that is inside
        // the runner's own emit (say, of a `start` event before the node's
        // handle is recorded); stopping there would miss that node.
        sink.onBrokenPipe = { scheduler.schedule { runner.stop(Runner.StopReason.interrupt(signal: SIGPIPE)) } }
        // Also when the nodes are silent and nothing is written to notice it.
        sink.notifyWhenReaderCloses(on: scheduler)

        // SIGINT, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\, which the Swift
        // runtime would answer with a crash report) stop the run cleanly
        // instead of killing moon: the loop hears of them. Ctrl-Z (SIGTSTP)
        // stops the nodes too, and `fg` (SIGCONT) resumes them.
        do {
            try loop.onSignals([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT]) { number in
                switch number {
                case SIGTSTP: processes.suspend()
                case SIGCONT: processes.resume()
                default: runner.stop(Runner.StopReason.interrupt(signal: number))
                }
            }
        } catch {
            Console.error("cannot take over SIGINT and SIGTERM (\(error))")
            return 1
        }

        scheduler.schedule { runner.start() }
        if let ownLoop {
            ownLoop.run(until: { summary != nil })
        } else {
            done.wait()
        }
        // Every node's processes are gone (a node ends only then): the
        // `$MOON_OUTPUT` directory can go. After a stop: at exit, once
        // `killAll` ran.
        if summary?.stopReason == nil { OutputDirectory.removeAll() }
        if let state {
            // For bench/uptodate.py: what the up-to-date checks cost.
            if Terminal.variable("MOON_STATE_STATS") == "1" {
                let (hashed, reused) = state.statistics
                let ms = String(format: "%.1f", state.checkSeconds * 1000)
                Console.errorLine("moon: state: checks took \(ms) ms; \(hashed) files hashed, \(reused) from the stat cache")
            }
        }
        if let store, let summary {
            var record = HistoryRecorder.record(summary, graphKey: state?.graphKey ?? graph.name, forced: state?.force ?? false)
            if case .interrupt? = summary.stopReason { record.interrupted = true }
            do {
                try store.record(record)
            } catch {
                warn("cannot record this run in \(store.path) (\(store.failureReason(error)))")
            }
        }
        // A signal from here on stops nothing: the loop no longer runs.
        processes.killAll()

        switch summary?.stopReason {
        case .interrupt(let number)?: return 128 + number
        default: return summary?.ok == true ? 0 : 1
        }
    }
}
