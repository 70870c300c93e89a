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
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            try pump(input, output, shouldStop: shouldStop) { chunk in
                hasher.update(bufferPointer: chunk)
                size += Int64(chunk.count)
            }
            // Holes at the end are not written: the length is set instead.
            guard ftruncate(output, off_t(size)) == 0 else { throw CacheError.io("cannot write \(destination)", errno) }
            // The mode on the open file: `open` applies the umask, and a path lookup costs more.
            guard fchmod(output, mode) == 0 else { throw CacheError.io("cannot set the mode of \(destination)", errno) }
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
        return (hex(hasher.finalize()), size)
    }

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

    /// Reads `input` to its end, passing each block to `chunk` and writing
    /// it to `output` (a block of zeros is skipped, left a hole), looking at
    /// `shouldStop` before each block.
    private static func pump(_ input: Int32, _ output: Int32, shouldStop: () -> Bool,
                             _ chunk: (UnsafeRawBufferPointer) -> Void) throws {
        // Below malloc's mmap threshold: no map and unmap per file copied.
        let size = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        defer { zeros.deallocate() }
        while true {
            if shouldStop() { throw CacheError.stopped }
            let n = Glibc.read(input, buffer.baseAddress, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw CacheError.io("read", errno)
            }
            if n == 0 { return }
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            chunk(block)
            if memcmp(block.baseAddress!, zeros.baseAddress!, n) == 0 {
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
    }
}
