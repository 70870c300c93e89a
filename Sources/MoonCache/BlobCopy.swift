import Crypto
import Foundation
import Glibc

/// Copies a file's bytes to a new file, hashing them on the way: what is
/// stored is exactly what was hashed, even if the source changes meanwhile.
enum BlobCopy {
    /// Copies `source` to `destination` (created, exclusive, with exactly `mode`);
    /// returns the SHA-256 (hex) and the size of what was copied.
    static func copy(from source: String, to destination: String, mode: mode_t = 0o644) throws -> (hash: String, size: Int64) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw CacheError.io("cannot read \(source)", errno) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard output >= 0 else { throw CacheError.io("cannot create \(destination)", errno) }
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            try pump(input, output) { chunk in
                hasher.update(bufferPointer: chunk)
                size += Int64(chunk.count)
            }
            // The mode on the open file: `open` applies the umask, and a path lookup costs more.
            guard fchmod(output, mode) == 0 else { throw CacheError.io("cannot set the mode of \(destination)", errno) }
        } catch {
            close(output)
            unlink(destination)
            throw error
        }
        guard close(output) == 0 else {
            unlink(destination)
            throw CacheError.io("cannot write \(destination)", errno)
        }
        return (hex(hasher.finalize()), size)
    }

    /// The whole of a file (nil when it cannot be read), with plain system
    /// calls: a cache entry is read at every restore.
    static func contents(of path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        var data = Data(count: Int(info.st_size))
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
        return ok ? data : nil
    }

    /// Writes `data` to a new file `destination` with `mode`.
    static func write(_ data: Data, to destination: String, mode: mode_t = 0o644) throws {
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
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
        guard close(output) == 0, written else {
            unlink(destination)
            throw CacheError.io("cannot write \(destination)", errno)
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

    /// Reads `input` to its end, passing each block to `chunk` and writing it to `output`.
    private static func pump(_ input: Int32, _ output: Int32, _ chunk: (UnsafeRawBufferPointer) -> Void) throws {
        // Below malloc's mmap threshold: no map and unmap per file copied.
        let size = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = Glibc.read(input, buffer.baseAddress, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw CacheError.io("read", errno)
            }
            if n == 0 { return }
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            chunk(block)
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
