import Dispatch
import Foundation
import MoonCommand
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun

/// Wires one `moon run`: the runner on its serial queue, real processes,
/// the reporter, and the signals that stop it. Returns the exit code.
final class RunSession {
    enum ReporterKind {
        case tty, plain, json
    }

    var outputMode: NodeOutputMode = .prefixed
    var color = false

    let graph: Graph
    let plan: Plan
    let options: RunOptions
    let reporterKind: ReporterKind
    let verbosity: PlainReporter.Verbosity

    init(graph: Graph, plan: Plan, options: RunOptions, reporterKind: ReporterKind, verbosity: PlainReporter.Verbosity) {
        self.graph = graph
        self.plan = plan
        self.options = options
        self.reporterKind = reporterKind
        self.verbosity = verbosity
    }

    func run() -> Int32 {
        // moon handles these itself: a closed stdout is noticed by the sink,
        // and SIGINT/SIGTERM stop the run cleanly instead of killing moon.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        // moon reaps (and can kill) whatever its nodes leave behind.
        try? ProcessLauncher.becomeSubreaper()

        let queue = DispatchQueue(label: "moon.run", qos: .userInitiated)
        let scheduler = QueueScheduler(queue: queue)
        let processes = ProcessLauncher.shared
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        let runPlan = RunPlan(graph: graph, plan: plan, cpus: cpus)
        let nodes = CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: scheduler, grace: options.grace,
                                    executeQueue: queue)

        let sink = OutputSink.standardOutput
        let reporter: Reporter
        switch reporterKind {
        case .json: reporter = JSONLinesReporter(sink: sink)
        case .plain: reporter = PlainReporter(sink: sink, verbosity: verbosity, outputMode: outputMode)
        case .tty:
            reporter = TTYReporter(sink: sink, options: TTYReporter.Options(verbosity: verbosity, outputMode: outputMode, color: color),
                                   queue: queue)
        }
        let runner = Runner(plan: runPlan, options: options, launcher: nodes, scheduler: scheduler) { reporter.report($0) }

        let done = DispatchSemaphore(value: 0)
        var summary: Runner.Summary?
        runner.onFinish = { (result: Runner.Summary) in
            summary = result
            done.signal()
        }
        // `moon run --json | head -1`: the reader is gone, so stop and clean up.
        // Asynchronously: the sink notices it inside a write, that is inside
        // the runner's own emit (say, of a `start` event before the node's
        // handle is recorded); stopping there would miss that node.
        sink.onBrokenPipe = { queue.async { runner.stop(Runner.StopReason.interrupt(signal: SIGPIPE)) } }
        // Also when the nodes are silent and nothing is written to notice it.
        sink.notifyWhenReaderCloses(on: queue)

        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { runner.stop(Runner.StopReason.interrupt(signal: number)) }
            source.resume()
            sources.append(source)
        }

        queue.async { runner.start() }
        done.wait()
        queue.sync { reporter.finish() }
        for source in sources { source.cancel() }
        processes.killAll()

        switch summary?.stopReason {
        case .interrupt(let number)?: return 128 + number
        default: return summary?.ok == true ? 0 : 1
        }
    }
}
