import Foundation
import MoonCache
import MoonCommand
import MoonEvents
import MoonGraph
import MoonProcess
import MoonReport
import MoonRun
import MoonState
import MoonSystem
import MoonWatch

/// `moon run --watch`: the selected nodes run once, then again whenever
/// their inputs change. The file system is a signal (`FileWatcher`); the
/// changes that touch an input are debounced into one trigger, and each
/// trigger becomes a run with `flatMap(.latest)`: a trigger that arrives
/// while a run is going supersedes it. Its running nodes that the change
/// affects are cancelled; the others are handed over still running, and
/// the next run (which starts once the superseded one has ended) adopts
/// them, as it adopts the services a run left running (`WatchLive`).
/// Every run is a fresh `Runner` on moon's event loop; everything here
/// runs on that loop. One file over 400 lines: the watching and the runs
/// share watch mode's state (the current job, the live nodes, the watcher).
package final class WatchSession {
    /// What made a run start.
    package enum Trigger {
        case initial
        case changes(FileChanges)
    }

    /// One trigger's run, from its start to its end (`end` completes its signal).
    package final class Job {
        package let trigger: Trigger
        package let end: () -> Void
        package init(_ trigger: Trigger, end: @escaping () -> Void) {
            self.trigger = trigger
            self.end = end
        }
    }

    package let setup: WatchSetup
    private var plan: Plan
    private var inputs: WatchInputs
    private var force: Bool
    /// The graph file failed to load: only its own change can start a run.
    private var graphBroken = false
    /// Graph indices of the nodes that succeeded (or stood up to date) when they last ran here.
    private var succeeded = Set<Int>()
    /// Per node name: the outputs and values it stands with when a rerun does not run it.
    private let results = WatchResults()
    /// With `--resume`: the run that watch mode's first run resumes.
    private var resume: ResumeRecord?
    /// Every secret value a run of this watch read: a node started by an
    /// earlier run (a service) may print a value since rotated.
    private var secretMask: SecretMask?
    /// A run's cache stores still going after its nodes ended: the next run waits for them.
    private var storing: OutputCache?
    /// The output cache, kept from run to run until a run is stopped (a
    /// stop cancels it for good): its warnings are said once, and a remote
    /// cache that failed is not asked again. Nil before the first run and
    /// after a stop or a reload.
    private var cache: OutputCache?
    /// `--no-cache`, or a cache directory moon must not use (said once).
    private var cacheOff = false
    /// Nodes a superseded run did not finish: they run in the next.
    private var carried = Set<Int>()
    /// Changes that came while a run went on: the next run covers them all.
    private var deferred = FileChanges()
    /// Nodes running between runs; made in `run`.
    private var live: WatchLive!
    /// Restarted nodes are being waited for before a run starts.
    private var preparing = false

    private let main: SessionHost
    private var processes: any ProcessGroups { main.processes }
    private let sink: OutputSink
    /// With `--json`, one reporter for the whole watch, so `seq` keeps increasing.
    private var sharedReporter: Reporter?
    private let status: WatchStatus
    private var runner: Runner?
    /// The job waiting for the superseded run to end.
    private var waiting: Job?
    private var stopSignal: Int32?
    private let watcher = SerialDisposable()
    private var watchedRoots: [WatchRoot] = []
    private var pipe: Observer<FileChanges>?
    /// Sends the first run's trigger: called on the loop once the watcher
    /// is in place, so no change after the first run read its inputs is missed.
    private var watcherPlaced: (() -> Void)?
    /// When the last run started: files changed since may have been missed.
    private var runStartedAt: Date?
    /// The graph files the graph file includes, as last loaded.
    private var included: [String]
    /// Per template (graph index) of a run-time fan-out: the instances its last expansion made.
    private var instances: [Int: [Node]] = [:]
    /// The `for-each` globs the graph file's last load expanded.
    private var fanOutGlobs: [FanOutGlob]

    /// `main`: the loop, processes and file system it runs on; `sink`: stdout.
    package init(setup: WatchSetup, file: GraphFile, plan: Plan, main: SessionHost, sink: OutputSink = .standardOutput) {
        self.sink = sink
        self.setup = setup
        self.plan = plan
        included = file.included
        fanOutGlobs = file.fanOutGlobs
        force = setup.force
        resume = setup.resume
        inputs = WatchInputs(plan: plan, state: IncrementalState(graph: plan.graph, store: setup.store), included: included,
                             fanOutGlobs: fanOutGlobs)
        self.main = main
        let report = setup.report
        let live = !report.isJSON && report.showsTerminal(fd: 1)
        status = WatchStatus(sink: sink, scheduler: main.scheduler, live: live, quietStdout: report.isJSON)
    }

    /// Runs until a stop signal; returns the exit code (128 + the signal).
    package func run() throws -> Int32 {
        try? processes.becomeSubreaper()
        let scheduler = main.scheduler
        if setup.report.isJSON { sharedReporter = JSONLinesReporter(sink: sink) }
        let idleReporter = sharedReporter ?? PlainReporter(sink: sink)
        let status = self.status
        live = WatchLive(scheduler: scheduler) { event in
            status.clear()
            idleReporter.report(event)
            status.redraw()
        }
        live.onEnded = { [unowned self] name, ok in
            processes.killOrphans { $0 == name }
            guard let index = plan.graph.index(of: name) else { return }
            if ok { succeeded.insert(index) } else { succeeded.remove(index) }
        }
        sink.onBrokenPipe = { [weak self, main] in main.post { self?.stop(signal: SIGPIPE) } }
        sink.notifyWhenReaderCloses(on: scheduler)
        try main.onSignals(MainLoop.stopSignals + [SIGTSTP, SIGCONT]) { [weak self] number in
            switch number {
            case SIGTSTP: self?.processes.suspend()
            case SIGCONT: self?.processes.resume()
            default: self?.stop(signal: number)
            }
        }
        var subscription: Disposable?
        main.run { [self] in
            let changes = Signal<FileChanges> { observer, _ in self.pipe = observer }
            let triggers = changes
                .filter { [unowned self] in self.matters($0) }
                .debounce(setup.watch.debounce, on: scheduler, merge: { $0.union($1) })
                .map { Trigger.changes($0) }
            // The first run starts once the watcher is in place (inotify's
            // watches are placed on the loop, or the poller's first look is
            // taken): an edit as that run ends, or during it, is then seen.
            let first = Signal<Trigger> { observer, _ in
                self.watcherPlaced = {
                    observer.send(next: .initial)
                    observer.sendCompleted()
                }
            }
            subscription = triggers.merge(with: first)
                .flatMap(.latest) { [unowned self] trigger in self.job(trigger) }
                .start { _ in }
            restartWatcher(force: true)
        }
        subscription?.dispose()
        watcher.dispose()
        status.stop()
        processes.killAll()
        return 128 + (stopSignal ?? SIGINT)
    }

    /// Ends watch mode: the run going on stops as after Ctrl-C in a plain
    /// run (a second one kills at once), and moon exits once it has.
    private func stop(signal: Int32) {
        let again = stopSignal != nil
        if stopSignal == nil { stopSignal = signal }
        waiting = nil
        if let runner {
            runner.stop(.interrupt(signal: signal))
        } else if let storing {
            // What is not stored yet is not; the run's end then ends watch mode.
            storing.interrupt()
        } else if again {
            processes.killAll()
        } else if !preparing {
            stopLiveAndFinish()
        }
    }

    /// Stops the nodes left running between runs, then ends watch mode.
    private func stopLiveAndFinish() {
        live.stopAll { [main] in main.finish() }
    }

    // MARK: - Watching

    /// Watches the current inputs' directories, unless they are watched already.
    private func restartWatcher(force: Bool = false) {
        guard force || inputs.roots != watchedRoots else {
            status.watching(files: inputs.fileCount())
            return
        }
        let added = Set(inputs.roots.map(\.path)).subtracting(watchedRoots.map(\.path))
        defer { catchUp(in: added) }
        watchedRoots = inputs.roots
        let status = self.status
        let pipe = self.pipe
        let main = self.main
        let placed = { [weak self] in
            guard let self, let first = self.watcherPlaced else { return }
            self.watcherPlaced = nil
            first()
        }
        // The new watcher is placed before the old one closes (both on the
        // loop, in order); what the old one saw until then is sent on too.
        watcher.inner = main.fileChanges(of: inputs.roots, poll: setup.watch.poll, announce: { method, error in
            status.announce(method, because: error)
            main.post(placed)
        }, leftover: { changes in
            pipe?.send(next: changes)
        }).start { event in
            if case .next(let changes) = event { pipe?.send(next: changes) }
        }
        status.watching(files: inputs.fileCount())
    }

    /// A depfile names files in directories watched only from now on: one
    /// written since the run started may have changed before its watch was
    /// placed (this runs on the loop after the watcher placed it), so it
    /// counts as changed; its node's up-to-date check has the last word.
    private func catchUp(in directories: Set<String>) {
        guard !directories.isEmpty, let since = runStartedAt else { return }
        let files = inputs.dependencies(in: directories)
        let pipe = self.pipe
        main.post {
            let changed = files.filter { path in
                guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
                else { return false }
                // File times are coarser than the clock.
                return modified.timeIntervalSince(since) >= -0.05
            }
            if !changed.isEmpty { pipe?.send(next: FileChanges(paths: Set(changed))) }
        }
    }

    /// Whether changes touch an input: the rest (what nodes write
    /// elsewhere, their `generates`) must not even delay a trigger.
    private func matters(_ changes: FileChanges) -> Bool {
        inputs.classify(changes).matters
    }

    // MARK: - Runs

    /// A trigger's run as a signal: it starts once the run before it has
    /// ended, and disposing it (a newer trigger) supersedes it.
    private func job(_ trigger: Trigger) -> Signal<Never> {
        Signal { [unowned self] observer, lifetime in
            let job = Job(trigger) { observer.sendCompleted() }
            if runner != nil || preparing || storing != nil {
                waiting = job
                if case .changes(let changes) = trigger {
                    deferred = deferred.union(changes)
                    supersede(for: changes)
                }
            } else {
                launch(job)
            }
            lifetime.add { [weak self, weak job] in
                guard let self, let job else { return }
                if self.waiting === job { self.waiting = nil }
            }
        }
    }

    /// A change came during a run: the run stops, cancelling the running
    /// nodes the change affects; the others carry on into the next run.
    private func supersede(for changes: FileChanges) {
        guard let runner else { return }
        let classified = inputs.classify(changes)
        if classified.reload || graphBroken { return runner.stop(.superseded) }
        // (A `for-each` glob that matches other files: what the new instances
        // change is known once the graph is planned again, in `launch`;
        // the running nodes are handed over meanwhile.)
        let affected = WatchPlan.affected(classified.nodes, plan: plan)
        let graph = plan.graph
        runner.supersede { name in
            guard let index = graph.index(of: name) else { return false }
            return !affected.contains(index) || !graph.nodes[index].restartsOnChange
        }
    }

    /// What a trigger reruns, and which running nodes restart or are adopted;
    /// one function (over 60 lines) as each step narrows the same node sets.
    private func launch(_ job: Job) {
        var changed: [String] = []
        var nodes = Set(plan.selected)
        var affected = Set(plan.selected)
        if case .changes(let own) = job.trigger {
            let changes = deferred.union(own)
            deferred = FileChanges()
            let classified = inputs.classify(changes)
            changed = classified.paths
            if classified.reload || graphBroken {
                // (A broken graph with `for-each` globs may be mended by their files: one that matches nothing is an error.)
                let retry = classified.reload || (!fanOutGlobs.isEmpty && classified.matters)
                guard retry, reloadGraph() != nil else { return job.end() }
                nodes = Set(plan.selected)
                affected = Set(plan.graph.nodes.indices)
            } else if classified.fanOuts, inputs.fanOutsChanged() {
                // A new, deleted or renamed file of a `for-each` glob: the
                // graph is planned again, and what it changed runs.
                let touched = classified.nodes.map { plan.graph.nodes[$0].name }
                guard let replanned = reloadGraph(keepingResults: true) else { return job.end() }
                nodes = replanned.union(touched.compactMap(plan.graph.index(of:)))
                affected = WatchPlan.affected(nodes, plan: plan)
            } else {
                nodes = classified.nodes
                affected = WatchPlan.affected(classified.nodes, plan: plan)
            }
        }
        nodes = WatchPlan.rerun(nodes.union(carried), plan: plan, succeeded: succeeded)
        carried = []
        // Nodes left running: those the change affects restart, the others are adopted.
        let graph = plan.graph
        var restart: [String] = []
        var adopt: [String] = []
        for name in live.nodes.keys.sorted() {
            guard let index = graph.index(of: name), plan.isSelected(index) else {
                restart.append(name)
                continue
            }
            if affected.contains(index) && graph.nodes[index].restartsOnChange {
                restart.append(name)
                nodes.insert(index)
            } else {
                adopt.append(name)
                nodes.insert(index)
            }
        }
        guard !nodes.isEmpty else { return job.end() }
        guard !restart.isEmpty else { return begin(job, nodes: nodes, adopt: adopt, changed: changed) }
        preparing = true
        live.stop(restart) { [unowned self] in
            preparing = false
            // What the stopped services left behind goes with them.
            processes.killOrphans { restart.contains($0) }
            if stopSignal != nil { return stopLiveAndFinish() }
            if let next = waiting {
                // A newer change came meanwhile: one run covers both.
                waiting = nil
                carried.formUnion(nodes)
                job.end()
                return launch(next)
            }
            begin(job, nodes: nodes, adopt: adopt, changed: changed)
        }
    }

    private func begin(_ job: Job, nodes: Set<Int>, adopt: [String], changed: [String]) {
        status.clear()
        let reporter = sharedReporter ?? setup.report.reporter(sink: sink, scheduler: main.scheduler, stallAfter: setup.stallAfter)
        if case .changes = job.trigger {
            // (Nodes the run takes over running do not run again.)
            let names = plan.selected.filter(nodes.contains).map { plan.graph.nodes[$0].name }.filter { !adopt.contains($0) }
            reporter.report(RunEvent(time: Date(), kind: .watch(changed: changed, nodes: names)))
        }
        start(job, nodes: nodes, reporter: reporter, adopt: live.take(adopt))
    }

    /// Starts the runner of one run: every selected node, those outside
    /// `nodes` standing as they last ended. Over 60 lines: the runner's
    /// wiring and its end of run read as one sequence.
    private func start(_ job: Job, nodes: Set<Int>, reporter: Reporter, adopt: [LiveNode]) {
        let graph = plan.graph
        let state = IncrementalState(graph: graph, store: setup.store, force: force, onWarning: warn)
        force = false
        // The output cache, as in a plain run: a rerun restores what an
        // earlier input left there, and what watch mode runs is stored.
        if cache == nil, !cacheOff {
            cache = setup.cache(graph)
            cacheOff = cache == nil
        }
        let cache = self.cache
        let checker = CacheChecker(inner: StoreChecker(state: state, plan: plan), state: state, plan: plan, cache: cache, resume: resume)
        resume = nil
        // Read again by each run: a rotated token is picked up without restarting moon.
        let secrets = SecretValues.read(for: graph)
        secretMask = secretMask.map { $0.adding(secrets.mask) } ?? secrets.mask
        let terminal = TerminalHandover(reporter: reporter, scheduler: main.scheduler)
        let launcher = main.nodeLauncher(graph: graph, plan: plan)
            ?? CommandLauncher(graph: graph, plan: plan, processes: processes, scheduler: main.scheduler,
                                       grace: setup.options.grace, secrets: secrets, terminal: terminal.processTerminal,
                                       slurm: setup.options.slurm)
        var ended = Set<Int>()
        let runner = Runner(plan: RunPlan(graph: graph, plan: plan, cpus: LinuxCalls.processorCount()), options: setup.options,
                            launcher: launcher, scheduler: main.scheduler) { [unowned self] event in
            if let name = event.node, let index = graph.index(of: name), nodes.contains(index) {
                track(event, index: index, ended: &ended)
            }
            if case .expand(let template, let names) = event.kind { expanded(template, into: names) }
            reporter.report(event)
        }
        runner.secretMask = secretMask
        runner.upToDate = WatchChecker(inner: checker, rerun: plan.selected.map(nodes.contains),
                                       names: plan.selected.map { graph.nodes[$0].name }, results: results)
        runner.keepsServices = true
        runner.terminal = terminal
        runner.adopt(adopt)
        let interruption = runner.checkInterruption
        checker.interruption = interruption
        state.shouldStop = { interruption.shouldStop }
        runner.onFinish = { [unowned self, unowned runner] summary in
            withExtendedLifetime(launcher) {}
            if sharedReporter == nil { reporter.finish() }
            state.flush()
            if let store = setup.store { HistoryRecorder.save(summary, state: state, in: store) }
            if summary.stopReason == .superseded { carried = nodes.subtracting(ended) }
            live.secretMask = self.secretMask
            live.add(runner.handedOver)
            // The end of a run in watch mode is what moon's exit is to a
            // plain run: what its nodes left behind is killed, except what
            // the nodes still running (services) started.
            let live = self.live!
            processes.killOrphans { live.nodes[$0] == nil }
            self.runner = nil
            let superseded = summary.stopReason == .superseded
            if summary.stopReason != nil { self.cache = nil }
            guard let cache else { return finished(job, ok: summary.ok, superseded: superseded) }
            // The stores end off the loop, which meanwhile hears a stop signal (and interrupts them).
            storing = cache
            let scheduler = main.scheduler
            Thread.detachNewThread {
                cache.finish()
                scheduler.schedule { [unowned self] in
                    storing = nil
                    finished(job, ok: summary.ok, superseded: superseded)
                }
            }
        }
        self.runner = runner
        runStartedAt = Date()
        runner.start()
    }

    /// What a node's event says of how it ended.
    private func track(_ event: RunEvent, index: Int, ended: inout Set<Int>) {
        switch event.kind {
        case .complete:
            succeeded.insert(index)
            ended.insert(index)
        case .skip(_, .upToDate), .skip(_, .cacheHit), .skip(_, .resumed):
            succeeded.insert(index)
            ended.insert(index)
        case .error(_, _, let error) where error.kind != .canceled:
            succeeded.remove(index)
            ended.insert(index)
        case .error, .skip:
            succeeded.remove(index)
        default:
            break
        }
    }

    /// A run-time fan-out made its instances: before any of them runs, what
    /// they write is known as moon's own, so their writes neither rerun
    /// anything nor cancel a running consumer.
    private func expanded(_ template: String, into names: [String]) {
        guard let index = plan.graph.index(of: template) else { return }
        // An instance is named TEMPLATE[ITEM] (`Runner.expand`).
        let items = names.map { String($0.dropFirst(template.count + 1).dropLast()) }
        let made = plan.graph.instances(ofDynamic: index, items: items)
        instances[index] = made
        inputs.learn(made, of: index)
    }

    private func finished(_ job: Job, ok: Bool, superseded: Bool) {
        if stopSignal != nil { return stopLiveAndFinish() }
        // A depfile read in this run names files to watch from now on.
        inputs = WatchInputs(plan: plan, state: IncrementalState(graph: plan.graph, store: setup.store), included: included,
                                 instances: instances, fanOutGlobs: fanOutGlobs)
        restartWatcher()
        if !superseded { status.lastRun(ok: ok) }
        job.end()
        if let next = waiting {
            waiting = nil
            launch(next)
        }
    }

    /// Reads the graph file again; on errors prints them, says moon waits
    /// for the next change and returns nil. Else returns the nodes (graph
    /// indices) whose definitions may have changed: all of them, or with
    /// `keepingResults` (the graph file is unchanged, a `for-each` glob's
    /// files are not), the new nodes and those whose needs changed; the
    /// others keep how they ended and their results.
    private func reloadGraph(keepingResults: Bool = false) -> Set<Int>? {
        do {
            let file = try GraphFile.load(setup.graphPath, overrides: setup.overrides, color: setup.diagnosticsColor)
            let plan = try GraphFileLocator.plan(for: file, words: setup.words, passthrough: setup.passthrough, exclude: setup.exclude,
                                                 requireAll: true, color: setup.diagnosticsColor, commands: setup.commands)
            let old = self.plan.graph
            let graph = plan.graph
            self.plan = plan
            graphBroken = false
            var changed = Set(graph.nodes.indices)
            if keepingResults {
                // By name: the indices are the new plan's.
                func names(_ indices: Set<Int>) -> Set<String> { Set(indices.map { old.nodes[$0].name }) }
                func indices(_ names: Set<String>) -> Set<Int> { Set(names.compactMap(graph.index(of:))) }
                succeeded = indices(names(succeeded))
                carried = indices(names(carried))
                results.keep { graph.index(of: $0) != nil }
                instances = Dictionary(uniqueKeysWithValues: instances.compactMap { template, made in
                    graph.index(of: old.nodes[template].name).map { ($0, made) }
                })
                let needs = Dictionary(old.nodes.map { ($0.name, $0.needs.map { old.nodes[$0].name }) }, uniquingKeysWith: { first, _ in first })
                changed = changed.filter { needs[graph.nodes[$0].name] != graph.nodes[$0].needs.map { graph.nodes[$0].name } }
            } else {
                succeeded = []
                results.keep { _ in false }
                carried = []
                instances = [:]
                // The file may name another cache.
                cache = nil
                cacheOff = false
            }
            deferred = FileChanges()
            included = file.included
            fanOutGlobs = file.fanOutGlobs
            inputs = WatchInputs(plan: plan, state: IncrementalState(graph: plan.graph, store: setup.store), included: included,
                                 instances: instances, fanOutGlobs: fanOutGlobs)
            restartWatcher()
            return changed
        } catch {
            if let error = error as? CLIError { Console.error(error.message) }
            graphBroken = true
            status.brokenGraph()
            return nil
        }
    }
}
