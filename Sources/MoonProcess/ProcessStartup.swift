import Glibc

/// What moon sets up first thing in `main`, before any thread or library
/// (Foundation, Dispatch) could need a descriptor or a signal.
public enum ProcessStartup {
    /// The fewest open files moon starts with: about 15 of its own (the
    /// standard descriptors, the event loop's wake and signal pipes, the
    /// output watch, /dev/null, the state store's database, journal and
    /// shared memory), one node's pipes, pidfd and death pipe, and the
    /// launcher's reserve (`ProcessLauncher.descriptorReserve`).
    /// Below it, libdispatch's start-up (`epoll_create` failing with
    /// EMFILE) crashed moon with SIGILL instead of saying anything.
    public static let minimumDescriptors: rlim_t = 32

    /// Ctrl-\ (SIGQUIT) quits as in any Unix tool (`moon run` then takes it
    /// over to stop its run cleanly): the Swift runtime's backtracer would
    /// answer it with a crash report and let the program go on. Returns an
    /// error message when the descriptor limit is too low for moon to work.
    public static func prepare() -> String? {
        signal(SIGQUIT, SIG_DFL)
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        guard limit.rlim_cur < minimumDescriptors else { return nil }
        return "moon needs at least \(minimumDescriptors) open files, but its limit is \(limit.rlim_cur): "
            + "raise it (ulimit -n 1024) and try again"
    }
}
