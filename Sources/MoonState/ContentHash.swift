import Crypto
import Foundation
import MoonSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A SHA-256 digest held in four words, so the stat cache stores 20,000 of
/// them without 20,000 arrays.
public struct ContentHash: Sendable, Hashable {
    var words: (UInt64, UInt64, UInt64, UInt64)

    public static func == (a: ContentHash, b: ContentHash) -> Bool { a.words == b.words }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// The 32 bytes of a digest (nil unless exactly 32).
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        // Contiguous storage (Data, arrays) is read in place: the store
        // decodes five hashes per node of a run.
        if let made = bytes.withContiguousStorageIfAvailable({ ContentHash(contiguous: UnsafeRawBufferPointer($0)) }) {
            self = made
            return
        }
        var w: [UInt64] = [0, 0, 0, 0]
        for (i, byte) in bytes.enumerated() { w[i / 8] = w[i / 8] << 8 | UInt64(byte) }
        words = (w[0], w[1], w[2], w[3])
    }

    /// The 32 bytes at `raw` (nil unless exactly 32), read in place.
    init?(raw: UnsafeRawBufferPointer) {
        guard raw.count == 32 else { return nil }
        self.init(contiguous: raw)
    }

    /// Exactly 32 bytes, most significant first.
    private init(contiguous raw: UnsafeRawBufferPointer) {
        func word(_ i: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
        words = (word(0), word(1), word(2), word(3))
    }

    /// All zeros: no file or fingerprint hashes to it in practice; marks "unknown".
    public static let zero = ContentHash(bytes: [UInt8](repeating: 0, count: 32))!

    init(_ digest: SHA256.Digest) {
        // In place: `Array(digest)` iterates the digest generically, byte by byte.
        self = digest.withUnsafeBytes { ContentHash(contiguous: $0) }
    }

    /// The 32 bytes, most significant first.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    /// The 32 bytes as Data (a store column), without an intermediate array.
    var data: Data {
        let bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return withUnsafeBytes(of: bigEndian) { Data(copying: $0) }
    }

    /// Appends the 32 bytes, most significant first, without an intermediate array.
    func appendBytes(to out: inout [UInt8]) {
        // A tuple of like elements is laid out in order, without padding.
        let bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        withUnsafeBytes(of: bigEndian) { out.append(contentsOf: $0) }
    }

    /// From 64 lowercase hex digits (as `hex` writes them); nil for anything else.
    public init?(hex: String) {
        var text = hex
        guard let words = text.withUTF8({ Self.words(hex: $0) }) else { return nil }
        self.words = words
    }

    private static func words(hex: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64, UInt64, UInt64)? {
        guard hex.count == 64 else { return nil }
        func word(_ start: Int) -> UInt64? {
            var w: UInt64 = 0
            for byte in hex[start..<(start + 16)] {
                switch byte {
                case 48...57: w = w << 4 | UInt64(byte - 48)
                case 97...102: w = w << 4 | UInt64(byte - 87)
                default: return nil
                }
            }
            return w
        }
        guard let a = word(0), let b = word(16), let c = word(32), let d = word(48) else { return nil }
        return (a, b, c, d)
    }

    /// Written straight from the words into the string's storage: every
    /// run writes one for each node it records.
    public var hex: String { hex(digits: 64) }

    /// The first `digits` (at most 64) hex digits: `moon why`'s parts keep
    /// 16 per file, written without the other 48.
    public func hex(digits: Int) -> String {
        let count = min(max(digits, 0), 64)
        return String(unsafeUninitializedCapacity: count) { out in
            withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)) { raw in
                for i in 0..<count {
                    let digit = (i & 1 == 0 ? raw[i >> 1] >> 4 : raw[i >> 1]) & 15
                    out[i] = digit < 10 ? 48 + digit : 87 + digit
                }
            }
            return count
        }
    }

    /// The SHA-256 of a file's content, read in 64 KiB blocks; nil when it
    /// cannot be read or `shouldStop` said to stop. `shouldStop` is polled
    /// between blocks, so that a huge source does not hold up Ctrl-C,
    /// `--timeout` or a closed pipe (MoonRun's `CheckInterruption`).
    /// Only a regular file of a real file system is read, without
    /// blocking: what a FIFO, a device or a pseudo file (`/proc/kmsg`,
    /// tracefs's `trace_pipe`, which say they are regular) gives has no
    /// end or is consumed by reading, and a blocked `read` hears no stop.
    /// Such a file counts as unreadable: its stat stands in for its content.
    public static func ofFile(_ path: String, shouldStop: () -> Bool = { false }) -> ContentHash? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let file = contentFile(fd) else { return nil }
        // A short read ends a file of a block device's file system; one of
        // a network or FUSE file system may read short in its middle.
        let length = file.onBlockDevice && file.size > 0 ? file.size : Int64.max
        var hasher = SHA256()
        let size = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            if shouldStop() { return nil }
            let n = read(fd, buffer.baseAddress, size)
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            total += Int64(n)
            // A short read that reached the size fstat gave is the end: no
            // read more to be told so (a file that grows meanwhile has
            // another size at its next stat, and is hashed again).
            if n < size, total >= length { break }
        }
        return ContentHash(hasher.finalize())
    }

    /// File systems whose files are the kernel's views, not content: proc,
    /// sys, debugfs, tracefs, securityfs, cgroup (1 and 2), configfs, bpf,
    /// efivarfs, pstore.
    static let pseudoFileSystems: Set<UInt32> = [
        0x9fa0, 0x6265_6572, 0x6462_6720, 0x7472_6163, 0x7363_6673, 0x0027_e0eb, 0x6367_7270, 0x6265_6570,
        0xcafe_4a11, 0xde5e_81e4, 0x6165_676c,
    ]

    /// The size of `fd` when it is a regular file on a file system that
    /// keeps content, and whether a block device is behind it. Its file
    /// system's type is asked once per device (`fstatfs`), and never for a
    /// device with a block device behind it: the pseudo file systems are
    /// all anonymous (major number 0), as are tmpfs, overlay, btrfs, NFS and FUSE.
    static func contentFile(_ fd: Int32) -> (size: Int64, onBlockDevice: Bool)? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let size = Int64(info.st_size)
        let device = UInt64(info.st_dev)
        #if os(Linux)
        // glibc's `major()`: bits 8–19 and 32–43.
        guard (device >> 8) & 0xfff | (device >> 32) & ~0xfff == 0 else { return (size, true) }
        #endif
        if let known = contentDevices.withLock({ $0[device] }) { return known ? (size, false) : nil }
        let content = LinuxCalls.fileSystemType(fd).map { !pseudoFileSystems.contains(UInt32(truncatingIfNeeded: $0)) } ?? true
        contentDevices.withLock { $0[device] = content }
        return content ? (size, false) : nil
    }

    /// `contentFile`'s answer per anonymous device (tmpfs, overlay,
    /// btrfs, proc…): a device number stands for one mounted file system.
    private static let contentDevices = Mutex<[UInt64: Bool]>([:])
}

/// Builds a digest from labelled parts, each length-prefixed so that no two
/// different sequences of parts hash alike. Parts are gathered in a buffer
/// and hashed in large blocks (20,000 small parts cost one pass, not 40,000
/// calls into the hash function).
public struct DigestBuilder {
    private var hasher = SHA256()
    private var buffer: [UInt8] = []
    /// Some parts went to the hasher already (`stamp` then folds the digest).
    private var flushed = false
    private static let block = 64 * 1024

    public init(_ label: String, capacity: Int = 4096) {
        buffer.reserveCapacity(capacity)
        add(label)
    }

    public mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            addLength(utf8.count)
            buffer.append(contentsOf: utf8)
        }
        flushIfFull()
    }

    public mutating func add(_ hash: ContentHash) {
        addLength(32)
        hash.appendBytes(to: &buffer)
        flushIfFull()
    }

    public mutating func add(_ number: Int) { add(String(number)) }

    private mutating func addLength(_ n: Int) {
        withUnsafeBytes(of: UInt64(n).littleEndian) { buffer.append(contentsOf: $0) }
    }

    private mutating func flushIfFull() {
        guard buffer.count >= Self.block else { return }
        buffer.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        buffer.removeAll(keepingCapacity: true)
        flushed = true
    }

    /// A 64-bit stamp of the parts (FNV-1a), to tell whether a small
    /// definition changed from one run to the next: a SHA-256 per node of
    /// every run's record would cost more than the record. Not for content
    /// another machine or a cache must trust (`finish` is for that).
    public func stamp() -> UInt64 {
        if flushed {
            let words = finish().words
            return words.0 ^ words.1 ^ words.2 ^ words.3
        }
        var stamp: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in buffer { stamp = (stamp ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return stamp
    }

    public func finish() -> ContentHash {
        var hasher = hasher
        buffer.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return ContentHash(hasher.finalize())
    }
}
