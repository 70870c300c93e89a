import Glibc
import Synchronization

/// The remote cache's secrets from moon's environment: the bearer token
/// (`MOON_REMOTE_CACHE_TOKEN`) and a URL with a password
/// (`MOON_REMOTE_CACHE=http://user:password@…`). `take` reads them once, at
/// start, then wipes their bytes where the kernel keeps moon's initial
/// environment (the block `/proc/<pid>/environ` shows to any process of
/// the same user, a node included: unsetting a variable only drops the
/// pointer to it) and unsets them, so no node finds them, neither in its
/// own environment nor in moon's.
public enum RemoteCredentials {
    public static let tokenVariable = "MOON_REMOTE_CACHE_TOKEN"
    public static let urlVariable = "MOON_REMOTE_CACHE"

    private static let taken = Mutex<[String: String]?>(nil)

    /// Reads and wipes the variables; call first thing in `main`, before
    /// any thread starts or anything reads the environment.
    public static func take() {
        var values: [String: String] = [:]
        for name in [tokenVariable, urlVariable] {
            guard let value = getenv(name).map({ String(cString: $0) }) else { continue }
            values[name] = value
            // A URL without a password is no secret: nodes keep seeing it.
            if name == urlVariable && !hasPassword(value) { continue }
            wipe(name)
            unsetenv(name)
        }
        taken.withLock { $0 = values }
    }

    /// The variable's value as moon started (read from the environment
    /// when `take` was not called, as in unit tests).
    public static func value(_ name: String) -> String? {
        if let values = taken.withLock({ $0 }) { return values[name] }
        return getenv(name).map { String(cString: $0) }
    }

    /// Whether `url` holds a `user:password@`.
    static func hasPassword(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }

    /// Overwrites with zeros the value of every `name=` string `environ`
    /// points to (at start, strings of the initial block; a name may be there twice).
    private static func wipe(_ name: String) {
        let environ: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = Glibc.environ
        guard let environ else { return }
        let prefix = Array((name + "=").utf8)
        var index = 0
        while let entry = environ[index] {
            index += 1
            let raw = UnsafeMutableRawPointer(entry)
            guard strncmp(entry, name + "=", prefix.count) == 0 else { continue }
            let length = strlen(entry)
            memset(raw + prefix.count, 0, length - prefix.count)
        }
    }
}
