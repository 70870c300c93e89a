import Foundation
import Glibc
import MoonCommand
import MoonEvents
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonSession
import MoonTestSupport
import MoonWatch

/// Watch mode on virtual time: a graph file in a scratch directory, its
/// nodes run by `FakeLauncher` on a `TestScheduler`, the file system's
/// changes sent by the test. `run(scenario)` runs watch mode until the
/// scenario ends it (`stop()`), as Ctrl-C does.
final class WatchHarness: SessionHost {
    let scheduler: DateScheduler
    let clock = TestScheduler()
    let launcher: FakeLauncher
    let processes: any ProcessGroups = NoProcesses()
    let directory: String
    let graphPath: String
    /// Every event reported, in order (the reporter of every run).
    private(set) var events: [RunEvent] = []
    private var observers: [Int: Observer<FileChanges>] = [:]
    private var nextObserver = 0
    private var signalHandler: ((Int32) -> Void)?
    private var finished = false
    private var names: [String] = []

    init(graph: String) throws {
        scheduler = clock
        launcher = FakeLauncher(scheduler: clock, grace: 5)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("moon-session-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        graphPath = directory + "/moon.yaml"
        try write("moon.yaml", graph)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func write(_ file: String, _ text: String) throws {
        let path = directory + "/" + file
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Runs watch mode on the graph file: `script` sets the fake nodes'
    /// scripts by name, `scenario` drives the clock and the changes.
    @discardableResult
    func run(debounce: Duration = .milliseconds(100), script: [String: FakeLauncher.Script] = [:],
             _ scenario: @escaping (WatchHarness) throws -> Void) throws -> Int32 {
        let file = try GraphFile.load(graphPath, color: false)
        let plan = try GraphFileLocator.plan(for: file, words: [], exclude: [], requireAll: true, color: false, commands: [])
        names = RunPlan(graph: plan.graph, plan: plan, cpus: 1).nodes.map(\.name)
        launcher.runNames = names
        for (name, script) in script {
            if let index = names.firstIndex(of: name) { launcher.scripts[index] = script }
        }
        let setup = WatchSetup(graphPath: graphPath, words: [], passthrough: [], exclude: [], commands: [], overrides: [:],
                               options: RunOptions(grace: .seconds(5)), report: Recording(self),
                               watch: WatchTiming(debounce: debounce, poll: nil), stallAfter: .seconds(30), force: false,
                               diagnosticsColor: false, store: nil, cache: { _ in nil }, resume: nil)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        let session = WatchSession(setup: setup, file: file, plan: plan, main: self, sink: OutputSink(fd: null))
        self.scenario = scenario
        return try session.run()
    }

    private var scenario: ((WatchHarness) throws -> Void)?
    private(set) var scenarioError: Error?

    // MARK: Driving

    /// Virtual seconds since the start.
    var now: TimeInterval { clock.now.timeIntervalSinceReferenceDate }

    func advance(_ seconds: TimeInterval) {
        clock.advance(by: .milliseconds(Int64(seconds * 1000)))
    }

    /// The files (relative to the graph's directory) change now, as the watcher would say.
    func change(_ files: String...) {
        let changes = FileChanges(paths: Set(files.map { directory + "/" + $0 }))
        for observer in observers.values { observer.send(next: changes) }
    }

    /// Ctrl-C.
    func stop() {
        signalHandler?(SIGINT)
    }

    // MARK: What a user would notice

    /// The virtual seconds at which `node`'s attempts started.
    func starts(of node: String) -> [TimeInterval] {
        guard let index = names.firstIndex(of: node) else { return [] }
        return launcher.starts.filter { $0.node == index }.map(\.time)
    }

    /// The virtual seconds at which `node`'s processes ended (exited or killed).
    func exits(of node: String) -> [TimeInterval] {
        guard let index = names.firstIndex(of: node) else { return [] }
        return launcher.exits.filter { $0.node == index }.map(\.time)
    }

    /// Each rerun's `watch` event: the changed paths and the nodes it reruns.
    var reruns: [(changed: [String], nodes: [String])] {
        events.compactMap { event in
            if case .watch(let changed, let nodes) = event.kind { return (changed, nodes) }
            return nil
        }
    }

    /// The nodes that started, per run (the first run, then each rerun), in order.
    var startedPerRun: [[String]] {
        var runs: [[String]] = []
        for event in events {
            switch event.kind {
            case .graphStart: runs.append([])
            case .start(let node, _, _, _, _): if !runs.isEmpty { runs[runs.count - 1].append(node) }
            default: break
            }
        }
        return runs
    }

    // MARK: SessionHost

    func run(_ start: @escaping () -> Void) {
        clock.schedule { start() }
        clock.advance()
        do { try scenario?(self) } catch { scenarioError = error }
        // The stop the scenario sent ends watch mode within the grace period.
        var steps = 0
        while !finished && steps < 10_000 {
            clock.advance(by: .milliseconds(100))
            steps += 1
        }
        if !finished { scenarioError = scenarioError ?? HarnessError.neverFinished }
    }

    func finish() { finished = true }

    func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        signalHandler = handler
    }

    func post(_ action: @escaping () -> Void) {
        clock.schedule { action() }
    }

    func fileChanges(of roots: [WatchRoot], poll: Duration?,
                     announce: @escaping @Sendable (FileWatcher.Method, WatchError?) -> Void,
                     leftover: @escaping @Sendable (FileChanges) -> Void) -> Signal<FileChanges> {
        Signal { [unowned self] observer, lifetime in
            let id = nextObserver
            nextObserver += 1
            observers[id] = observer
            lifetime.add { [weak self] in self?.observers[id] = nil }
            announce(.inotify(directories: roots.count), nil)
        }
    }

    func nodeLauncher(graph: Graph, plan: Plan) -> NodeLauncher? { launcher }

    fileprivate func record(_ event: RunEvent) { events.append(event) }
}

enum HarnessError: Error { case neverFinished }

/// Every run reports to the harness.
private struct Recording: ReportChoice {
    unowned let harness: WatchHarness
    init(_ harness: WatchHarness) { self.harness = harness }
    var isJSON: Bool { false }
    func showsTerminal(fd: Int32) -> Bool { false }
    func reporter(sink: OutputSink, scheduler: DateScheduler, stallAfter: Duration) -> Reporter { Recorder(harness) }
}

private final class Recorder: Reporter {
    unowned let harness: WatchHarness
    init(_ harness: WatchHarness) { self.harness = harness }
    func report(_ event: RunEvent) { harness.record(event) }
}

/// No real process: the fake nodes have none.
private final class NoProcesses: ProcessGroups, @unchecked Sendable {
    func launch(_ spec: ProcessSpec, onOutput: @escaping @Sendable (OutputLine) -> Void,
                onExit: @escaping @Sendable (Termination) -> Void) throws -> any ProcessHandle {
        throw ProcessLaunchError(kind: .systemError, program: spec.executable, errno: ENOSYS, message: "no processes in this test")
    }
    func becomeSubreaper() throws {}
    func killAll() {}
    func killOrphans(ofNodes ended: (String) -> Bool) {}
    func suspend() {}
    func resume() {}
}
