/// Why the cache could not store or restore something. Never fatal: a
/// node whose entry cannot be used runs, and a store that fails is a warning.
public enum CacheError: Error, CustomStringConvertible {
    case invalidEntry(String)
    case missingBlob(String)
    case corruptBlob(String)
    case io(String, Int32)
    /// A file of the cache that moon never writes there: not a regular
    /// file, or past a size cap (its path, and what is wrong with it).
    case damaged(String, String)
    /// An output larger than the cache's size limit (its path and size).
    case tooLarge(String, Int64)
    /// The run stopped while a file was read or written.
    case stopped
    /// Using it would follow a link or trust another user's directory: a
    /// directory of the cache, or a restored output's parent, that is a
    /// symbolic link or belongs to someone else (why, said whole).
    case unsafe(String)

    public var description: String {
        switch self {
        case .invalidEntry(let what): return "invalid cache entry: \(what)"
        case .missingBlob(let hash): return "blob \(hash) is missing"
        case .corruptBlob(let hash): return "blob \(hash) does not match its hash"
        case .io(let what, let code): return "\(what): \(String(cString: strerror(code)))"
        case .damaged(let path, let why): return "\(path) \(why)"
        case .tooLarge(let path, let size): return "'\(path)' has \(size) bytes, more than the cache's size limit"
        case .stopped: return "stopped"
        case .unsafe(let why): return why
        }
    }
}

import Glibc
