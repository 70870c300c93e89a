#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the stat cache compares to decide that a file is unchanged without
/// reading it: size, modification time in nanoseconds and inode (a file
/// replaced by a rename gets a new inode even with the same size and time).
public struct FileStat: Sendable, Hashable {
    public var size: Int64
    public var mtimeNanoseconds: Int64
    public var inode: UInt64

    public init(size: Int64, mtimeNanoseconds: Int64, inode: UInt64) {
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.inode = inode
    }

    init(_ st: stat) {
        size = Int64(st.st_size)
        #if canImport(Darwin)
        mtimeNanoseconds = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
        #else
        mtimeNanoseconds = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        #endif
        inode = UInt64(st.st_ino)
    }

    /// The kind of entry a path names (symbolic links followed).
    public enum Kind: Sendable { case file, directory, other }

    /// `stat(2)` of `path`, following symbolic links; nil when it does not exist.
    public static func of(_ path: String) -> (FileStat, Kind)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (FileStat(st), kind(st))
    }

    static func kind(_ st: stat) -> Kind {
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The current wall-clock time in nanoseconds, to compare with mtimes.
    static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// A monotonic clock in nanoseconds, for measuring.
    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Whether a write right after the file was hashed could leave the same
    /// size and mtime (git's "racily clean" entries): its mtime is within
    /// one clock tick of `hashedAt`. Such an entry is hashed again next time.
    /// Filesystems with whole-second times get a two-second margin.
    func isRacy(hashedAt: Int64) -> Bool {
        let margin: Int64 = mtimeNanoseconds % 1_000_000_000 == 0 ? 2_000_000_000 : 100_000_000
        return hashedAt - mtimeNanoseconds < margin
    }

    /// Whether the file was last written before `time` (a precise clock's
    /// reading). The kernel stamps files from a coarse clock that lags by up
    /// to a scheduler tick (at most 10 ms), so a later write can carry an
    /// mtime up to that much before `time`; 20 ms covers it. Whole-second
    /// filesystems get two seconds.
    func writtenBefore(_ time: Int64) -> Bool {
        let margin: Int64 = mtimeNanoseconds % 1_000_000_000 == 0 ? 2_000_000_000 : 20_000_000
        return time - mtimeNanoseconds >= margin
    }
}
