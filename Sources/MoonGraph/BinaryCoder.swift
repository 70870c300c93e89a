/// A compact positional binary form of a `Codable` value, for the compiled
/// graph (`GraphCache`): no keys, no type names, fields in the order the
/// synthesized `encode(to:)` and `init(from:)` visit them (the same order),
/// so a stored property added to a type is coded without a second list that
/// could forget it. Integers are 8 bytes little-endian; a string is its
/// UTF-8 length and bytes; an optional is a presence byte; a sequence is its
/// count then its elements; a `[String: V]` (and an enum case, whose key the
/// synthesized decoder asks for first) is its key count and keys, then its
/// values. Only what `BinaryCoding.encode` wrote is read back: a short,
/// corrupt or foreign input throws, it never traps.
public enum BinaryCoding {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let core = BinaryEncoderCore()
        try core.encodeValue(value)
        return core.bytes
    }

    /// Decodes a `T` that fills `bytes` exactly.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        let core = BinaryDecoderCore(bytes)
        let value = try core.decodeValue(T.self)
        guard !core.failed, core.offset == bytes.count else { throw Failure(description: "malformed binary value") }
        return value
    }
}

// MARK: - Encoding

/// How an optional and a `[String: V]` are written: found by their metatype,
/// so that the value itself is never cast (a cast would look through an optional).
private protocol BinaryOptional {
    static func encode(at pointer: UnsafeRawPointer, into core: BinaryEncoderCore) throws
}

extension Optional: BinaryOptional where Wrapped: Encodable {
    fileprivate static func encode(at pointer: UnsafeRawPointer, into core: BinaryEncoderCore) throws {
        switch pointer.assumingMemoryBound(to: Self.self).pointee {
        case .none: core.bytes.append(0)
        case .some(let wrapped):
            core.bytes.append(1)
            try core.encodeValue(wrapped)
        }
    }
}

private protocol BinaryStringDictionary {
    static func encode(at pointer: UnsafeRawPointer, into core: BinaryEncoderCore) throws
}

extension Dictionary: BinaryStringDictionary where Key == String, Value: Encodable {
    /// Keys sorted, so that equal dictionaries are equal bytes.
    fileprivate static func encode(at pointer: UnsafeRawPointer, into core: BinaryEncoderCore) throws {
        let dictionary = pointer.assumingMemoryBound(to: Self.self).pointee
        let keys = dictionary.keys.sorted()
        core.writeInteger(Int64(keys.count))
        for key in keys { core.writeString(key) }
        for key in keys { try core.encodeValue(dictionary[key]!) }
    }
}

final class BinaryEncoderCore: Encoder {
    var bytes: [UInt8] = []
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(BinaryKeyedEncoding<Key>(core: self))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer { BinaryUnkeyedEncoding(core: self) }
    func singleValueContainer() -> SingleValueEncodingContainer { BinarySingleEncoding(core: self) }

    func writeInteger<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: Int64(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
    }

    func writeUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
    }

    func writeString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeInteger(Int64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    func writeDouble(_ value: Double) { writeUnsigned(value.bitPattern) }

    func encodeValue<T: Encodable>(_ value: T) throws {
        if let optional = T.self as? BinaryOptional.Type {
            try withUnsafePointer(to: value) { try optional.encode(at: UnsafeRawPointer($0), into: self) }
        } else if let dictionary = T.self as? BinaryStringDictionary.Type {
            try withUnsafePointer(to: value) { try dictionary.encode(at: UnsafeRawPointer($0), into: self) }
        } else if let string = value as? String {
            writeString(string)
        } else {
            try value.encode(to: self)
        }
    }
}

private struct BinaryKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let core: BinaryEncoderCore
    var codingPath: [CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { core.bytes.append(0) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { core.bytes.append(value ? 1 : 0) }
    mutating func encode(_ value: String, forKey key: Key) throws { core.writeString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { core.writeDouble(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { core.writeDouble(Double(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { core.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { core.writeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try core.encodeValue(value) }

    // An absent optional is a 0 byte, a present one a 1 and its value.
    private mutating func present<T: Encodable>(_ value: T?) throws {
        guard let value else { core.bytes.append(0); return }
        core.bytes.append(1)
        try core.encodeValue(value)
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try present(value) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try present(value) }

    /// An enum case: its key is written, since the synthesized decoder reads `allKeys` to learn the case.
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        core.writeInteger(Int64(1))
        core.writeString(key.stringValue)
        return core.container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer { core.unkeyedContainer() }
    mutating func superEncoder() -> Encoder { core }
    mutating func superEncoder(forKey key: Key) -> Encoder { core }
}

private struct BinaryUnkeyedEncoding: UnkeyedEncodingContainer {
    let core: BinaryEncoderCore
    /// Where the element count is, written again after each element.
    private let countAt: Int
    private(set) var count = 0
    var codingPath: [CodingKey] { [] }

    init(core: BinaryEncoderCore) {
        self.core = core
        countAt = core.bytes.count
        core.writeInteger(Int64(0))
    }

    private mutating func counted() {
        count += 1
        let core = core, countAt = countAt
        withUnsafeBytes(of: Int64(count).littleEndian) { counted in
            for i in 0..<8 { core.bytes[countAt + i] = counted[i] }
        }
    }

    mutating func encodeNil() throws { core.bytes.append(0); counted() }
    mutating func encode(_ value: Bool) throws { core.bytes.append(value ? 1 : 0); counted() }
    mutating func encode(_ value: String) throws { core.writeString(value); counted() }
    mutating func encode(_ value: Double) throws { core.writeDouble(value); counted() }
    mutating func encode(_ value: Float) throws { core.writeDouble(Double(value)); counted() }
    mutating func encode(_ value: Int) throws { core.writeInteger(value); counted() }
    mutating func encode(_ value: Int8) throws { core.writeInteger(value); counted() }
    mutating func encode(_ value: Int16) throws { core.writeInteger(value); counted() }
    mutating func encode(_ value: Int32) throws { core.writeInteger(value); counted() }
    mutating func encode(_ value: Int64) throws { core.writeInteger(value); counted() }
    mutating func encode(_ value: UInt) throws { core.writeUnsigned(value); counted() }
    mutating func encode(_ value: UInt8) throws { core.writeUnsigned(value); counted() }
    mutating func encode(_ value: UInt16) throws { core.writeUnsigned(value); counted() }
    mutating func encode(_ value: UInt32) throws { core.writeUnsigned(value); counted() }
    mutating func encode(_ value: UInt64) throws { core.writeUnsigned(value); counted() }
    mutating func encode<T: Encodable>(_ value: T) throws { try core.encodeValue(value); counted() }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        count += 1
        return core.container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        count += 1
        return core.unkeyedContainer()
    }

    mutating func superEncoder() -> Encoder { core }
}

private struct BinarySingleEncoding: SingleValueEncodingContainer {
    let core: BinaryEncoderCore
    var codingPath: [CodingKey] { [] }

    mutating func encodeNil() throws { core.bytes.append(0) }
    mutating func encode(_ value: Bool) throws { core.bytes.append(value ? 1 : 0) }
    mutating func encode(_ value: String) throws { core.writeString(value) }
    mutating func encode(_ value: Double) throws { core.writeDouble(value) }
    mutating func encode(_ value: Float) throws { core.writeDouble(Double(value)) }
    mutating func encode(_ value: Int) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { core.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { core.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt8) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt16) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt32) throws { core.writeUnsigned(value) }
    mutating func encode(_ value: UInt64) throws { core.writeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try core.encodeValue(value) }
}

// MARK: - Decoding

final class BinaryDecoderCore: Decoder {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    /// Set where a non-throwing requirement (`allKeys`, `decodeNil`) met bad input.
    var failed = false
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(BinaryKeyedDecoding<Key>(core: self))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer { try BinaryUnkeyedDecoding(core: self) }
    func singleValueContainer() throws -> SingleValueDecodingContainer { BinarySingleDecoding(core: self) }

    var malformed: BinaryCoding.Failure { BinaryCoding.Failure(description: "malformed binary value at byte \(offset)") }

    func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw malformed }
        defer { offset += 1 }
        return bytes[offset]
    }

    func readBool() throws -> Bool {
        switch try readByte() {
        case 0: return false
        case 1: return true
        default: throw malformed
        }
    }

    func readWord() throws -> UInt64 {
        guard bytes.count - offset >= 8 else { throw malformed }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    func readInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let word = Int64(bitPattern: try readWord())
        guard let value = T(exactly: word) else { throw malformed }
        return value
    }

    func readUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type) throws -> T {
        guard let value = T(exactly: try readWord()) else { throw malformed }
        return value
    }

    func readCount() throws -> Int {
        let count = try readInteger(Int.self)
        // Every element takes at least a byte: a count beyond the input is corrupt, not an allocation to attempt.
        guard count >= 0, count <= bytes.count - offset else { throw malformed }
        return count
    }

    func readString() throws -> String {
        let count = try readCount()
        defer { offset += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
    }

    func readDouble() throws -> Double { Double(bitPattern: try readWord()) }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == String.self { return try readString() as! T }
        return try T(from: self)
    }
}

private struct BinaryKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let core: BinaryDecoderCore
    var codingPath: [CodingKey] { [] }

    /// Asked for only by an enum's and a dictionary's synthesized decoder, first: the keys written before the values.
    var allKeys: [Key] {
        do {
            let count = try core.readCount()
            var keys: [Key] = []
            keys.reserveCapacity(count)
            for _ in 0..<count {
                guard let key = Key(stringValue: try core.readString()) else { throw core.malformed }
                keys.append(key)
            }
            return keys
        } catch {
            core.failed = true
            return []
        }
    }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { try core.readByte() == 0 }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try core.readBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try core.readString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try core.readDouble() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try core.readDouble()) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try core.readInteger(Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try core.readInteger(Int8.self) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try core.readInteger(Int16.self) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try core.readInteger(Int32.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try core.readInteger(Int64.self) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try core.readUnsigned(UInt.self) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try core.readUnsigned(UInt8.self) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try core.readUnsigned(UInt16.self) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try core.readUnsigned(UInt32.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try core.readUnsigned(UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try core.decodeValue(T.self) }

    private func present<T: Decodable>(_ type: T.Type) throws -> T? {
        try core.readBool() ? try core.decodeValue(T.self) : nil
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(type) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(type) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(type) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(type) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(type) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try present(type) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try present(type) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try present(type) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(type) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try present(type) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try present(type) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try present(type) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try present(type) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try present(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try present(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try core.container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer { try core.unkeyedContainer() }
    func superDecoder() throws -> Decoder { core }
    func superDecoder(forKey key: Key) throws -> Decoder { core }
}

private struct BinaryUnkeyedDecoding: UnkeyedDecodingContainer {
    let core: BinaryDecoderCore
    let count: Int?
    private(set) var currentIndex = 0
    var codingPath: [CodingKey] { [] }
    var isAtEnd: Bool { currentIndex >= count! }

    init(core: BinaryDecoderCore) throws {
        self.core = core
        count = try core.readCount()
    }

    /// Counts the element about to be read; past the last one, the input is corrupt.
    private mutating func advance() throws -> BinaryDecoderCore {
        guard !isAtEnd else { throw core.malformed }
        currentIndex += 1
        return core
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw core.malformed }
        // A nil element is consumed here; a present one is left for `decode`, which counts it.
        guard core.offset < core.bytes.count, core.bytes[core.offset] == 0 else { return false }
        core.offset += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let core = try advance(); return try core.readBool() }
    mutating func decode(_ type: String.Type) throws -> String { let core = try advance(); return try core.readString() }
    mutating func decode(_ type: Double.Type) throws -> Double { let core = try advance(); return try core.readDouble() }
    mutating func decode(_ type: Float.Type) throws -> Float { let core = try advance(); return Float(try core.readDouble()) }
    mutating func decode(_ type: Int.Type) throws -> Int { let core = try advance(); return try core.readInteger(Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let core = try advance(); return try core.readInteger(Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let core = try advance(); return try core.readInteger(Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let core = try advance(); return try core.readInteger(Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let core = try advance(); return try core.readInteger(Int64.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let core = try advance(); return try core.readUnsigned(UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let core = try advance(); return try core.readUnsigned(UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let core = try advance(); return try core.readUnsigned(UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let core = try advance(); return try core.readUnsigned(UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let core = try advance(); return try core.readUnsigned(UInt64.self) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { let core = try advance(); return try core.decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let core = try advance()
        return try core.container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer { let core = try advance(); return try core.unkeyedContainer() }
    mutating func superDecoder() throws -> Decoder { core }
}

private struct BinarySingleDecoding: SingleValueDecodingContainer {
    let core: BinaryDecoderCore
    var codingPath: [CodingKey] { [] }

    /// Asked for only by `Optional`'s decoder: its presence byte.
    func decodeNil() -> Bool {
        guard let byte = try? core.readByte(), byte <= 1 else {
            core.failed = true
            return true
        }
        return byte == 0
    }

    func decode(_ type: Bool.Type) throws -> Bool { try core.readBool() }
    func decode(_ type: String.Type) throws -> String { try core.readString() }
    func decode(_ type: Double.Type) throws -> Double { try core.readDouble() }
    func decode(_ type: Float.Type) throws -> Float { Float(try core.readDouble()) }
    func decode(_ type: Int.Type) throws -> Int { try core.readInteger(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try core.readInteger(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try core.readInteger(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try core.readInteger(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try core.readInteger(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try core.readUnsigned(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try core.readUnsigned(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try core.readUnsigned(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try core.readUnsigned(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try core.readUnsigned(UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try core.decodeValue(T.self) }
}
