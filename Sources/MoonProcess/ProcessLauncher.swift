import Foundation
import MoonCommand
import Glibc
import MoonEventLoop
import MoonSystem
import Synchronization

/// The real `ProcessLaunching`: children started with `posix_spawn` and
/// `pidfd_open` (CMoonSpawn) and watched through pidfds, one
/// thread for all of them (the `EventLoop`, which moon's runner shares),
/// and process groups that are killed whole.
///
/// moon makes one launcher, on the event loop it made (`init(loop:)`): it
/// reaps its children by pid (through pidfds), never with `waitpid(-1)`, so
/// other code in the same process may still spawn and wait for its own
/// children — except after `becomeSubreaper()`, which makes this launcher
/// reap every child.
///
/// Each child:
/// - starts in its own process group (pgid = pid), its signal mask cleared
///   and every signal's disposition set to default (even one moon ignores,
///   such as SIGPIPE);
/// - has stdin on `/dev/null`, stdout and stderr on two pipes, and no other
///   descriptor;
/// - when its main process exits, its whole group is SIGKILLed before it is
///   reaped: no background job of a node outlives the node.
///
/// If moon itself dies, even by SIGKILL, the kernel SIGKILLs every child's
/// group through its `DeathPipe` (`PR_SET_PDEATHSIG` would miss the rest of
/// the group).
///
/// The launcher's work is split by concept: spawning one child
/// (`ProcessLauncher+Spawn`), waiting for resources when moon runs out of
/// them (`+ResourceWaits`), reaping and killing (`+Reaping`), and orphans
/// (`+Subreaper`).
public final class ProcessLauncher: ProcessLaunching, @unchecked Sendable {
    let lock = Mutex(())

    // Guarded by `lock`.
    var live: [pid_t: LaunchedProcess] = [:]
    var spawnsInFlight = 0
    /// Whether a child was ever started: before that, moon has no orphans to look for.
    var hasSpawned = false
    var monitor: ChildMonitor?
    var isSubreaper = false
    /// Death pipes of reaped children, for the next ones (see `DeathPipe`).
    var spareDeathPipes: [DeathPipe] = []
    static let spareDeathPipeLimit = 256
    var reapGeneration: UInt64 = 0
    var patienceNanoseconds: UInt64 = 10_000_000_000
    /// `RLIMIT_NOFILE` as last read (0: not yet; see `hasReserve`).
    var descriptorLimit: Int32 = 0
    /// The children's memory cgroups (`ProcessSpec.memoryCgroup`), probed at the first that asks.
    let cgroups = MemoryCgroups()
    /// Every child's stdin (see `devNullDescriptor`); -1 until first needed.
    var devNull: Int32 = -1
    /// When the first of the current resource waiters began to wait, and
    /// when a child last completed (its descriptors free again).
    var waitingSince: UInt64 = 0
    var lastCompletion: UInt64 = 0

    // Owned by the loop's thread (see `ProcessLauncher+ResourceWaits`).
    var resourceWaiters: [(Bool) -> Bool] = []
    var waitersRetryPosted = false
    var retryingWaiters = false
    /// Whether the last launch on the loop failed because its program was
    /// busy (ETXTBSY), and how often the first waiter has tried since.
    var lastLaunchWasBusy = false
    var busyRetries = 0
    var busyRetryPosted = false

    /// The loop the launcher was given (nil: it starts one of its own on a
    /// thread when first needed).
    private let givenLoop: EventLoop?

    /// A launcher whose children are watched on `loop`, which its owner
    /// runs (started on a thread, or run by the owner's thread); without
    /// one, the launcher starts a loop of its own on a thread when first needed.
    public init(loop: EventLoop? = nil) {
        givenLoop = loop
    }

    /// Starts `spec`. When moon is out of descriptors or processes (EMFILE,
    /// ENFILE, EAGAIN, ENOMEM), it does not fail at once: while children of
    /// its own are running, their exits give resources back, so it waits for
    /// the next reap and tries again, and fails with `.outOfResources` only
    /// after `outOfResourcesPatience` without any child exiting (or at once
    /// when no child is running). On the launcher's own thread (the event
    /// loop, which is the one that reaps) it never waits: it throws, and the
    /// caller queues its retry with `waitForResources`, so that events,
    /// timers and signals go on meanwhile.
    public func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> any ProcessHandle {
        try launch(spec, onOutput: onOutput, onExitWithUsage: { termination, _ in onExit(termination) })
    }

    /// `launch`, with what the child's process tree used (`ProcessUsage`,
    /// from `wait4`): its group's leader with the descendants it waited
    /// for, and, once moon is their subreaper, the members of its group
    /// that moon reaped.
    public func launch(
        _ spec: ProcessSpec,
        onOutput: @escaping @Sendable (OutputLine) -> Void,
        onExitWithUsage onExit: @escaping @Sendable (Termination, ProcessUsage?) -> Void
    ) throws -> any ProcessHandle {
        var lastProgress = LinuxCalls.monotonicNanoseconds()
        let onLoop = lock.withLock { _ in monitor?.loop.isCurrent ?? false }
        if onLoop { lastLaunchWasBusy = false }
        while true {
            let generation = lock.withLock { _ in reapGeneration }
            do {
                if mustQueueBehindWaiters {
                    throw ProcessLaunchError.from(errno: EMFILE, program: spec.executable, doing: "creating a pipe")
                }
                return try launchOnce(spec, onOutput: onOutput, onExit: onExit)
            } catch let error as ProcessLaunchError where error.kind == .outOfResources {
                if error.errno == ETXTBSY {
                    lastLaunchWasBusy = true
                    throw error
                }
                // Spare death pipes hold descriptors: give them back first.
                if releaseSpareDeathPipes() { continue }
                if onLoop {
                    throw canWaitForResources ? error : error.withResourceHint()
                }
                guard waitForReap(after: generation, lastProgress: &lastProgress) else {
                    throw error.withResourceHint()
                }
            }
        }
    }

    /// How long `launch` keeps waiting for a child to exit when resources
    /// are exhausted (default 10 s; zero fails at once).
    public var outOfResourcesPatience: Duration {
        get { lock.withLock { _ in .nanoseconds(Int64(clamping: patienceNanoseconds)) } }
        set {
            let nanoseconds = UInt64(newValue.clampedNanoseconds())
            lock.withLock { _ in patienceNanoseconds = nanoseconds }
        }
    }

    // MARK: The event loop

    /// The launcher's event loop: the one it was given, or its own thread,
    /// started if need be. Throws `ProcessLaunchError` if it cannot start
    /// (no descriptor for its pipe).
    public func eventLoop() throws -> EventLoop {
        try startedMonitor(program: "moon").loop
    }

    /// Watches children on the given loop, or starts a loop of its own on a
    /// thread, the first time.
    func startedMonitor(program: String) throws -> ChildMonitor {
        try lock.withLock { _ in
            if let monitor { return monitor }
            let loop: EventLoop
            if let givenLoop {
                loop = givenLoop
            } else {
                do {
                    loop = try EventLoop()
                } catch let error as POSIXError {
                    throw ProcessLaunchError.from(errno: error.code.rawValue, program: program, doing: "starting the launcher")
                }
            }
            let made = ChildMonitor(loop: loop, reap: { [unowned self] process in reap(process) },
                                    completed: { [unowned self] in childCompleted(on: loop) })
            if givenLoop == nil { loop.start() }
            monitor = made
            return made
        }
    }
}
