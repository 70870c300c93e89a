import Glibc

/// Runs `body` on a new detached POSIX thread (or at once on this one when
/// no thread can be made). For work started in moon's
/// first milliseconds (`EarlyGraph`, `EarlyStore`): the first Foundation
/// `Thread` of a process cost ~1 ms before its body ran.
enum BackgroundThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    static func start(_ body: @escaping () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard made == 0 else {
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return
        }
        pthread_detach(thread)
    }
}
