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
        // `withCString` lends a native string's own bytes; passing the String
        // itself copies it into a new array for every call.
        guard path.withCString({ stat($0, &st) }) == 0 else { return nil }
        return (FileStat(st), kind(st))
    }

    /// `fstat(2)` of the open file `fd`; nil when it fails.
    public static func of(descriptor fd: Int32) -> (FileStat, Kind)? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
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

    /// The clock the kernel stamps files with, read now (`writtenBefore`'s
    /// argument): a file written after this reading carries an mtime at
    /// least this value. On Linux that is the coarse real-time clock; fine
    /// grained stamps are never below it. Elsewhere, the precise clock less
    /// 20 ms, more than a scheduler tick's lag.
    static func fileClockNanoseconds() -> Int64 {
        var ts = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        #else
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec) - 20_000_000
        #endif
    }

    /// Whether the file was last written before `fileClock` was read
    /// (`fileClockNanoseconds`): its mtime is below it, as a later write's
    /// cannot be. Whole-second filesystems get a two-second margin.
    func writtenBefore(_ fileClock: Int64) -> Bool {
        if mtimeNanoseconds % 1_000_000_000 == 0 { return fileClock - mtimeNanoseconds >= 2_000_000_000 }
        return mtimeNanoseconds < fileClock
    }
}
