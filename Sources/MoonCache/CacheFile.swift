import Glibc
import MoonGraph

/// A file named relative to an open directory (`AT_FDCWD`: a plain path),
/// and how messages name it. Inside the cache and below a restored output's
/// parent the directory is one opened without following links, so a link
/// planted above the name cannot lead anywhere else.
struct FileLocation {
    let directory: Int32
    let name: String
    let display: String

    init(_ directory: Int32, _ name: String, display: String) {
        self.directory = directory
        self.name = name
        self.display = display
    }

    /// A plain path, resolved as the kernel resolves it.
    init(path: String) {
        self.init(AT_FDCWD, path, display: path)
    }

    func unlink() {
        _ = unlinkat(directory, name, 0)
    }
}

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
        try open(FileLocation(path: path), maxSize: maxSize)
    }

    static func open(_ location: FileLocation, maxSize: Int64 = .max) throws -> CacheFile? {
        let path = location.display
        let fd = openat(location.directory, location.name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
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
            throw CacheError.damaged(path, "is larger than \(ByteSize.text(Int64(maxSize)))")
        }
        return CacheFile(descriptor: fd, size: Int64(info.st_size))
    }
}
