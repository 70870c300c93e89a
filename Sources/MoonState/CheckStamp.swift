/// A 128-bit stamp of what a node's up-to-date check compares besides its
/// files: its command, environment, patterns and what its needs left. Stored
/// with each success, so that an unchanged node is found up to date by
/// comparing one stamp and its files' stats, with no SHA-256 (the digests of
/// `NodeFingerprint` are taken only when something differs, and only they
/// ever make a cache key). Fields are length-prefixed and mixed a word at a
/// time; each step is a bijection of the state, so two inputs that differ in
/// one field never collide. Stable across runs and machines.
public struct CheckStamp: Sendable, Equatable {
    public var a: UInt64
    public var b: UInt64

    public init(a: UInt64, b: UInt64) {
        self.a = a
        self.b = b
    }

    init(_ label: String) {
        a = 0x243f_6a88_85a3_08d3
        b = 0x1319_8a2e_0370_7344
        add(label)
    }

    private mutating func mix(_ word: UInt64) {
        a = (a ^ word) &* 0x9e37_79b9_7f4a_7c15
        a ^= a >> 32
        b = (b ^ word ^ 0x5851_f42d_4c95_7f2d) &* 0xc2b2_ae3d_27d4_eb4f
        b ^= b >> 29
    }

    mutating func add(_ number: Int) { mix(UInt64(bitPattern: Int64(number))) }

    mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add(bytes: UnsafeRawBufferPointer($0)) }
    }

    mutating func add(bytes raw: UnsafeRawBufferPointer) {
        mix(UInt64(raw.count))
        var i = 0
        while i + 8 <= raw.count {
            mix(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        guard i < raw.count else { return }
        var tail: UInt64 = 0
        for k in i..<raw.count { tail |= UInt64(raw[k]) << UInt64(8 * (k - i)) }
        mix(tail)
    }

    mutating func add(_ stamp: CheckStamp) {
        mix(stamp.a)
        mix(stamp.b)
    }
}

/// `DigestBuilder.stamp()` of the same parts (FNV-1a over the same
/// length-prefixed bytes), taken as they come: a run stamps every node's
/// definition for its resume record. Once the parts reach the builder's
/// block, its stamp folds a SHA-256 instead: `tooLong` then says to take it
/// with the builder.
struct StreamedStamp: DigestParts {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private var count = 0
    private static let block = 64 * 1024

    init(_ label: String) { add(label) }

    /// The byte count, when the builder would have hashed its block.
    var tooLong: Int? { count >= Self.block ? count : nil }

    private mutating func add(byte: UInt8) { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }

    mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            withUnsafeBytes(of: UInt64(utf8.count).littleEndian) { for byte in $0 { add(byte: byte) } }
            for byte in utf8 { add(byte: byte) }
            count += 8 + utf8.count
        }
    }

    mutating func add(_ number: Int) { add(String(number)) }

    /// A stamp's text: 16 lowercase hex digits, zeros first.
    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { out in
            for i in 0..<16 {
                let digit = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * i)) & 15
                out[i] = digit < 10 ? 48 + digit : 87 + digit
            }
            return 16
        }
    }
}

/// The parts a fingerprint digest and a check stamp are made of, so that
/// both are built from one description of a node (`addCommand`).
protocol DigestParts {
    mutating func add(_ text: String)
    mutating func add(_ number: Int)
}

extension CheckStamp: DigestParts {}
extension DigestBuilder: DigestParts {}
