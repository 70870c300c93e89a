import Glibc

/// Opens a file of the cache (an entry or a blob) for reading, refusing
/// what a damaged or hostile cache may hold there instead: a FIFO (whose
/// `open` would wait for a writer forever), a link to a device, or a file
/// larger than the caller expects. The open never blocks and never follows
/// a link: moon writes only regular files there.
struct CacheFile {
    let descriptor: Int32
    let size: Int64

    /// The open file at `path`; nil when there is none; throws
    /// `CacheError.damaged` when it is not a regular file or is larger than `maxSize`.
    static func open(_ path: String, maxSize: Int64 = .max) throws -> CacheFile? {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw CacheError.damaged(path, "is a link, not a regular file") }
            throw CacheError.io("cannot read \(path)", code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw CacheError.io("cannot read \(path)", code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw CacheError.damaged(path, "is not a regular file")
        }
        guard Int64(info.st_size) <= maxSize else {
            close(fd)
            throw CacheError.damaged(path, "is larger than \(maxSize >> 20) MB")
        }
        return CacheFile(descriptor: fd, size: Int64(info.st_size))
    }
}
