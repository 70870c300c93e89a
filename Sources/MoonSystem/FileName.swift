#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A name from the file system (a directory entry, an inotify event, a
/// depfile) is bytes; moon names files with Strings, which are UTF-8. A name
/// that is not UTF-8 has no String that opens the same file (decoding with
/// replacement names another, missing file), so every place that turns an
/// entry's bytes into a name goes through `decode`, and one that gets nil
/// refuses the name with a message that shows it (`shown`), never skips it.
public enum FileName {
    /// The name as a String, or nil when its bytes are not UTF-8.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // ASCII, as nearly every name is, needs no validating (a walk of 20,000 files names each).
        if !bytes.contains(where: { $0 >= 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// The name of directory entry `entry` (its `d_name`, up to the NUL),
    /// or nil when it is not UTF-8; `body` gets the bytes either way.
    public static func withName<R>(of entry: UnsafePointer<dirent>,
                                   _ body: (_ name: String?, _ bytes: UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: entry.pointee.d_name) { raw in
            let all = raw.bindMemory(to: UInt8.self)
            let bytes = UnsafeBufferPointer(rebasing: all[..<(all.firstIndex(of: 0) ?? all.count)])
            return try body(decode(bytes), bytes)
        }
    }

    /// The bytes of directory entry `entry`'s name (its `d_name`, up to the
    /// NUL), read in place: for a walk that decodes only the names it keeps.
    public static func withBytes<R>(of entry: UnsafePointer<dirent>, _ body: (_ bytes: UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let entry = UnsafeMutablePointer(mutating: entry)
        return try withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
            let name = UnsafeRawPointer(tuple)
            return try body(UnsafeBufferPointer(start: name.assumingMemoryBound(to: UInt8.self),
                                                count: strlen(name.assumingMemoryBound(to: CChar.self))))
        }
    }

    /// The bytes as one line of visible text, for messages: UTF-8 as it
    /// is, each byte that is not UTF-8 as `\xE9`, and each `isHidden`
    /// character as `\u{9D}` (so `src/caf\xE9.txt`).
    public static func shown<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        if let text = decode(bytes) { return shown(text) }
        var out = ""
        var rest = ArraySlice(bytes)
        while !rest.isEmpty {
            // The longest valid UTF-8 prefix, then one invalid byte.
            var valid = 0
            var i = rest.startIndex
            while i < rest.endIndex {
                let length = sequenceLength(rest[i...])
                if length == 0 { break }
                i += length
                valid = i - rest.startIndex
            }
            out += shown(String(decoding: rest.prefix(valid), as: UTF8.self))
            rest = rest.dropFirst(valid)
            if let byte = rest.first {
                out += "\\x" + hex(UInt32(byte), width: 2)
                rest = rest.dropFirst()
            }
        }
        return out
    }

    /// `text` with each `isHidden` character as `\u{…}`.
    public static func shown(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHidden) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isHidden(scalar) { out += "\\u{" + hex(scalar.value, width: 2) + "}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// Characters a terminal does not show as themselves: C0, DEL and C1
    /// controls, which it may act on, and the bidirectional embeddings,
    /// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder
    /// the text shown around them ("Trojan Source"). A name holding one
    /// would be shown as text that is not the name.
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The length of the valid UTF-8 sequence at the start of `bytes`, 0 when it is not one.
    private static func sequenceLength(_ bytes: ArraySlice<UInt8>) -> Int {
        guard let lead = bytes.first else { return 0 }
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        guard bytes.count >= length else { return 0 }
        return decode(bytes.prefix(length)) == nil ? 0 : length
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
