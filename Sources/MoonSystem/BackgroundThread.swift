import CMoonSystem
import Glibc

/// A new detached, named POSIX thread for `body` (the event loop's own
/// thread, the state store's checkpoints): a plain `pthread_create`, which
/// starts at once and needs no Foundation machinery.
public enum BackgroundThread {
    private final class Body {
        let name: String?
        let run: () -> Void
        init(_ name: String?, _ run: @escaping () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts `body` on a new thread; false (and nothing runs) when the
    /// system cannot make one. `name` shows in `ps -T`, `top -H` and
    /// debuggers (at most 15 bytes). `elsewhere`: only on another CPU than
    /// the caller's, for work meant to run beside it (false, and nothing
    /// runs, when the caller may use no other).
    @discardableResult
    public static func start(name: String? = nil, elsewhere: Bool = false, _ body: @escaping () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body(name, body)).toOpaque()
        let made = moon_start_thread({ context in
            guard let context else { return nil }
            let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
            if let name = body.name { BackgroundThread.setName(String(name.prefix(15))) }
            body.run()
            return nil
        }, context, elsewhere ? 1 : 0)
        guard made == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        return true
    }

    /// glibc's `pthread_setname_np`, on the calling thread.
    fileprivate static func setName(_ name: String) {
        moon_set_thread_name(name)
    }

    /// Runs `body` on a new thread, or here when none can be made (for work
    /// that only runs sooner on another thread).
    public static func run(name: String? = nil, _ body: @escaping () -> Void) {
        if !start(name: name, body) { body() }
    }
}
