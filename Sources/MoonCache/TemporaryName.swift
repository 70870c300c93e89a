import Glibc
import Synchronization

/// Names for files written under a temporary name and renamed into place
/// (`tmp/` in the cache, `.moon-restore-…` beside a restored output): the
/// process id and a number unique in the process, counted from a random
/// start, so no two processes (nor one started with the pid of an earlier
/// one that crashed) pick the same name, and a name costs no system call.
/// Each is created exclusively (`O_EXCL`, `mkdirat`) all the same.
enum TemporaryName {
    private static let pid = getpid()
    private static let counter = Mutex(UInt64.random(in: 0...UInt64.max))

    static func next() -> String {
        let number = counter.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        return "\(pid)-\(number)"
    }
}
