import MoonCommand
import MoonGraph
import MoonProcess
import MoonRun
import MoonWatch

/// What a run or watch mode runs on, given by its caller: moon's event
/// loop, the launcher of the nodes' processes and the file system
/// (`MainLoop`), or, in tests, virtual time, fake nodes and the changes a
/// test sends. Everything `RunSession` and `WatchSession` do happens on `scheduler`.
package protocol SessionHost: AnyObject {
    var scheduler: DateScheduler { get }
    /// The nodes' processes: launched, and killed, suspended or resumed all at once.
    var processes: any ProcessGroups { get }
    /// Runs `start` on the host, then the host until `finish()`.
    func run(_ start: @escaping () -> Void)
    /// Ends `run`; called on the host.
    func finish()
    /// Calls `handler` on the host with each of `signals` moon receives.
    func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws
    /// Runs `action` on the host after what is queued there.
    func post(_ action: @escaping () -> Void)
    /// The changes below `roots` (`FileWatcher.changes`).
    func fileChanges(of roots: [WatchRoot], poll: Duration?,
                     announce: @escaping @Sendable (FileWatcher.Method, WatchError?) -> Void,
                     leftover: @escaping @Sendable (FileChanges) -> Void) -> Signal<FileChanges>
    /// The launcher of a run's nodes instead of a `CommandLauncher` on
    /// `processes` (tests: nodes that take virtual time); nil for real processes.
    func nodeLauncher(graph: Graph, plan: Plan) -> NodeLauncher?
}

/// What `RunSession` and `WatchSession` do to every node's processes at once.
package protocol ProcessGroups: ProcessLaunching {
    /// Makes moon the reaper of what its nodes leave behind.
    func becomeSubreaper() throws
    func killAll()
    /// Kills the processes that left the groups of the nodes `ended` names.
    func killOrphans(ofNodes ended: (String) -> Bool)
    /// Ctrl-Z and `fg`: every node's group stopped, and continued.
    func suspend()
    func resume()
}

extension ProcessLauncher: ProcessGroups {}

extension MainLoop: SessionHost {
    package func post(_ action: @escaping () -> Void) {
        loop.post(action)
    }

    package func fileChanges(of roots: [WatchRoot], poll: Duration?,
                             announce: @escaping @Sendable (FileWatcher.Method, WatchError?) -> Void,
                             leftover: @escaping @Sendable (FileChanges) -> Void) -> Signal<FileChanges> {
        FileWatcher.changes(of: roots, loop: loop, poll: poll, announce: announce, leftover: leftover)
    }

    package func nodeLauncher(graph: Graph, plan: Plan) -> NodeLauncher? { nil }
}
