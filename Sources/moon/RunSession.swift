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
        // moon handles these itself: a closed stdout is noticed by the sink,
        // and SIGINT/SIGTERM stop the run cleanly instead of killing moon.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        // moon reaps (and can kill) whatever its nodes leave behind.
        try? ProcessLauncher.becomeSubreaper()

        // The runner, its commands and the reporter live on moon's event
        // loop, the launcher's thread: a child's exit, the runner's decision
        // and the next spawn happen there without a thread hand-off.
        let processes = ProcessLauncher.shared
        let scheduler: DateScheduler
        do {
            scheduler = LoopScheduler(loop: try processes.eventLoop())
        } catch {
            FileHandle.standardError.write(Data("moon: error: \(error)\n".utf8))
            return 1
        }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        let runPlan = RunPlan(graph: graph, plan: plan, cpus: cpus)
        let nodes = CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler, grace: options.grace,
                                    executeOn: scheduler)

        let sink = OutputSink.standardOutput
        let reporter: Reporter
        switch reporterKind {
        case .json: reporter = JSONLinesReporter(sink: sink)
        case .plain: reporter = PlainReporter(sink: sink, verbosity: verbosity, outputMode: outputMode)
        case .tty:
            reporter = TTYReporter(sink: sink, options: TTYReporter.Options(verbosity: verbosity, outputMode: outputMode, color: color,
                                                                         stallAfter: stallAfter),
                                   scheduler: scheduler)
        }
        let runner = Runner(plan: runPlan, options: options, launcher: nodes, scheduler: scheduler) { event in
            reporter.report(event)
        }
        if let state { runner.upToDate = StoreChecker(state: state, plan: plan) }

        let done = DispatchSemaphore(value: 0)
        let outputsRemoved = DispatchSemaphore(value: 0)
        var summary: Runner.Summary?
        runner.onFinish = { [state] (result: Runner.Summary) in
            // Still on the loop, where the reporter and the state live.
            reporter.finish()
            state?.flush()
            summary = result
            done.signal()
            // Every node's processes are gone (a node ends only then): the
            // `$MOON_OUTPUT` directory goes now, here, while the main thread
            // writes the history (removing it waits for the disk, ~0.2 ms on
            // ext4 with discard). After a stop: at exit, once `killAll` ran.
            if result.stopReason == nil { OutputDirectory.removeAll() }
            outputsRemoved.signal()
        }
        // `moon run --json | head -1`: the reader is gone, so stop and clean up.
        // Asynchronously: the sink notices it inside a write, that is inside
        // the runner's own emit (say, of a `start` event before the node's
        // handle is recorded); stopping there would miss that node.
        sink.onBrokenPipe = { scheduler.schedule { runner.stop(Runner.StopReason.interrupt(signal: SIGPIPE)) } }
        // Also when the nodes are silent and nothing is written to notice it.
        sink.notifyWhenReaderCloses(on: scheduler)

        // Signals arrive on a Dispatch queue and hop to the loop.
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global(qos: .userInitiated))
            source.setEventHandler { scheduler.schedule { runner.stop(Runner.StopReason.interrupt(signal: number)) } }
            source.resume()
            sources.append(source)
        }

        scheduler.schedule { runner.start() }
        done.wait()
        if let state {
            // For bench/uptodate.py: what the up-to-date checks cost.
            if Terminal.variable("MOON_STATE_STATS") == "1" {
                let (hashed, reused) = state.statistics
                let ms = String(format: "%.1f", state.checkSeconds * 1000)
                FileHandle.standardError.write(Data("moon: state: checks took \(ms) ms; \(hashed) files hashed, \(reused) from the stat cache\n".utf8))
            }
        }
        if let store, let summary {
            let record = HistoryRecorder.record(summary, graphKey: state?.graphKey ?? graph.name, forced: state?.force ?? false)
            do {
                try store.record(record)
            } catch {
                warn("cannot record this run in \(store.path) (\(StateStore.reason(error)))")
            }
        }
        // The signal sources are not cancelled: moon exits next, and a
        // cancel woke libdispatch's worker threads (two new threads, ~0.2 ms
        // after the last node). A signal from here on stops nothing.
        withExtendedLifetime(sources) {}
        processes.killAll()
        outputsRemoved.wait()

        switch summary?.stopReason {
        case .interrupt(let number)?: return 128 + number
        default: return summary?.ok == true ? 0 : 1
        }
    }
}

/// A warning of moon itself (not of a graph file), on stderr.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("moon: warning: \(message)\n".utf8))
}
