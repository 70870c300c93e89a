import Crypto
import Foundation
import Glibc

/// Copies a file's bytes to a new file, hashing them on the way: what is
/// stored is exactly what was hashed, even if the source changes meanwhile.
enum BlobCopy {
    /// Copies `source` (a regular file, opened as `CacheFile` does) to
    /// `destination` (created, exclusive, with exactly `mode`); returns the
    /// SHA-256 (hex) and the size of what was copied. A source whose size is
    /// not `expectedSize` is refused before it is read (`sizeMismatch`), and
    /// `shouldStop` ends the copy within a block (`CacheError.stopped`, the
    /// destination removed). Blocks of zeros become holes: a sparse file stays sparse.
    static func copy(from source: String, to destination: String, mode: mode_t = 0o644, expectedSize: Int64? = nil,
                     shouldStop: () -> Bool = { false }) throws -> (hash: String, size: Int64) {
        try copy(from: FileLocation(path: source), to: FileLocation(path: destination), mode: mode, expectedSize: expectedSize,
                 shouldStop: shouldStop)
    }

    static func copy(from source: FileLocation, to target: FileLocation, mode: mode_t = 0o644, expectedSize: Int64? = nil,
                     shouldStop: () -> Bool = { false }) throws -> (hash: String, size: Int64) {
        guard let file = try CacheFile.open(source) else { throw CacheError.io("cannot read \(source.display)", ENOENT) }
        let input = file.descriptor
        defer { close(input) }
        if let expectedSize, file.size != expectedSize { throw SizeMismatch(size: file.size) }
        let destination = target.display
        let output = openat(target.directory, target.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard output >= 0 else { throw CacheError.io("cannot create \(destination)", errno) }
        let copied: (hash: String, size: Int64)
        do {
            copied = try fill(output, from: input, display: destination, mode: mode, expectedSize: expectedSize, shouldStop: shouldStop)
        } catch {
            close(output)
            target.unlink()
            throw error
        }
        guard close(output) == 0 else {
            let code = errno
            target.unlink()
            throw CacheError.io("cannot write \(destination)", code)
        }
        return copied
    }

    /// `copy` into `output`, a new file the caller made (and closes) with
    /// `mode`, shown as `display`: an unnamed one (`O_TMPFILE`) the restore
    /// links into place.
    static func copy(from source: FileLocation, into output: Int32, display: String, mode: mode_t, expectedSize: Int64? = nil,
                     shouldStop: () -> Bool = { false }) throws -> (hash: String, size: Int64) {
        guard let file = try CacheFile.open(source) else { throw CacheError.io("cannot read \(source.display)", ENOENT) }
        let input = file.descriptor
        defer { close(input) }
        if let expectedSize, file.size != expectedSize { throw SizeMismatch(size: file.size) }
        return try fill(output, from: input, display: display, mode: mode, expectedSize: expectedSize, shouldStop: shouldStop)
    }

    /// Copies `input` into `output`, hashing what it copies, and gives the new file exactly `mode`.
    private static func fill(_ output: Int32, from input: Int32, display destination: String, mode: mode_t, expectedSize: Int64?,
                             shouldStop: () -> Bool) throws -> (hash: String, size: Int64) {
        var hasher = SHA256()
        var size: Int64 = 0
        // A file of a known size is read to that size and no further (what was read is what is hashed).
        let endsInHole = try pump(input, output, limit: expectedSize, shouldStop: shouldStop) { chunk in
            hasher.update(bufferPointer: chunk)
            size += Int64(chunk.count)
        }
        // Holes at the end are not written: the length is set instead.
        if endsInHole, ftruncate(output, off_t(size)) != 0 { throw CacheError.io("cannot write \(destination)", errno) }
        // `open` applies the umask: the mode is set on the open file when the umask took bits of it.
        if mode & ~Self.creationMode(mode) != 0, fchmod(output, mode) != 0 {
            throw CacheError.io("cannot set the mode of \(destination)", errno)
        }
        return (hex(hasher.finalize()), size)
    }

    /// The mode `open` gives a new file asked for with `mode`: without the
    /// process's umask (read once from /proc; none when it cannot be read,
    /// then every mode is set again on the open file). moon never changes its umask.
    static func creationMode(_ mode: mode_t) -> mode_t {
        guard let umask = processUmask else { return 0 }
        return mode & ~umask
    }

    private static let processUmask: mode_t? = {
        // A /proc file's size is 0 by `stat`: read to its end.
        let fd = Glibc.open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += block[0..<n]
        }
        guard let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }) else {
            return nil
        }
        return mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    }()

    /// A file's size is not the one expected (what it is).
    struct SizeMismatch: Error {
        let size: Int64
    }

    /// The whole of a cache file (nil when there is none), with plain system
    /// calls: a cache entry is read at every restore. Throws
    /// `CacheError.damaged` for what is not a regular file or is larger than `maxSize`.
    static func contents(of path: String, maxSize: Int64) throws -> Data? {
        try contents(of: FileLocation(path: path), maxSize: maxSize)
    }

    static func contents(of location: FileLocation, maxSize: Int64) throws -> Data? {
        let path = location.display
        guard let file = try CacheFile.open(location, maxSize: maxSize) else { return nil }
        let fd = file.descriptor
        defer { close(fd) }
        var data = Data(count: Int(file.size))
        var filled = 0
        let ok = data.withUnsafeMutableBytes { raw -> Bool in
            while filled < raw.count {
                let n = Glibc.read(fd, raw.baseAddress! + filled, raw.count - filled)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                filled += n
            }
            return true
        }
        guard ok else { throw CacheError.io("cannot read \(path)", errno) }
        return data
    }

    /// Writes `data` to a new file `destination` with `mode`.
    static func write(_ data: Data, to target: FileLocation, mode: mode_t = 0o644) throws {
        let destination = target.display
        let output = openat(target.directory, target.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard output >= 0 else { throw CacheError.io("cannot create \(destination)", errno) }
        let written = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(output, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
        let code = errno
        guard close(output) == 0, written else {
            let failure = written ? errno : code
            target.unlink()
            throw CacheError.io("cannot write \(destination)", failure)
        }
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func sha256(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    /// Reads `input` to its end (or `limit` bytes), passing each block to
    /// `chunk` and writing it to `output` (a block of zeros is skipped, left
    /// a hole), looking at `shouldStop` before each block. Whether the last
    /// block was a hole (the file is then shorter than what was read).
    private static func pump(_ input: Int32, _ output: Int32, limit: Int64?, shouldStop: () -> Bool,
                             _ chunk: (UnsafeRawBufferPointer) -> Void) throws -> Bool {
        // Below malloc's mmap threshold: no map and unmap per file copied.
        let size = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var left = limit ?? .max
        var hole = false
        while left > 0 {
            if shouldStop() { throw CacheError.stopped }
            let n = Glibc.read(input, buffer.baseAddress, Int(min(Int64(size), left)))
            if n < 0 {
                if errno == EINTR { continue }
                throw CacheError.io("read", errno)
            }
            if n == 0 { break }
            left -= Int64(n)
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            chunk(block)
            // All zeros: the first byte is, and each byte equals the next.
            hole = block[0] == 0 && memcmp(block.baseAddress!, block.baseAddress! + 1, n - 1) == 0
            if hole {
                guard lseek(output, off_t(n), SEEK_CUR) >= 0 else { throw CacheError.io("write", errno) }
                continue
            }
            var offset = 0
            while offset < n {
                let w = Glibc.write(output, block.baseAddress! + offset, n - offset)
                if w < 0 {
                    if errno == EINTR { continue }
                    throw CacheError.io("write", errno)
                }
                offset += w
            }
        }
        return hole
    }
}
