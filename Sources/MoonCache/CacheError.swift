/// Why the cache could not store or restore something. Never fatal: a
/// node whose entry cannot be used runs, and a store that fails is a warning.
public enum CacheError: Error, CustomStringConvertible {
    case invalidEntry(String)
    case missingBlob(String)
    case corruptBlob(String)
    case io(String, Int32)

    public var description: String {
        switch self {
        case .invalidEntry(let what): return "invalid cache entry: \(what)"
        case .missingBlob(let hash): return "blob \(hash) is missing"
        case .corruptBlob(let hash): return "blob \(hash) does not match its hash"
        case .io(let what, let code): return "\(what): \(String(cString: strerror(code)))"
        }
    }
}

import Glibc
