/// JSON string literals, for every JSON moon writes.
public enum JSONString {
    /// Appends `s` as a JSON string literal (RFC 8259). Also escapes DEL, the
    /// C1 controls U+0080–U+009F (JSON allows them raw, but a terminal that
    /// shows the stream may act on them: `moon run --json` on a screen), and
    /// U+2028 and U+2029, which JSON allows raw but JavaScript line readers do not.
    /// Shared by every JSON moon writes (graph exports and the event stream).
    public static func quote(_ s: String, into out: inout String) {
        // The usual text (a node name, a queue, a one-line command) has
        // nothing to escape and is appended whole; any other is escaped a
        // byte at a time (`escape`), as into bytes.
        if isPlain(s) {
            out += "\""
            out += s
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        quote(s, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` as a JSON string literal to UTF-8 `bytes`: the same
    /// literal as `quote(_:into:)` writes into a String.
    public static func quote(_ s: String, into bytes: inout [UInt8]) {
        bytes.append(0x22)
        if isPlain(s) {
            bytes.append(contentsOf: s.utf8)
        } else {
            var s = s
            s.withUTF8 { escape($0, into: &bytes) }
        }
        bytes.append(0x22)
    }

    /// `utf8` (a String's, so valid UTF-8) escaped a byte at a time: a long
    /// text with a tab on each line (a run's node records, a multi-line
    /// command) is not rebuilt scalar by scalar. (0xE2 starts U+2028 and
    /// U+2029, 0xC2 the C1 controls.)
    private static func escape(_ utf8: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        func unicode(_ value: UInt32) {
            let digits = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [0x5C, 0x75])
            for shift in stride(from: 12, through: 0, by: -4) { bytes.append(digits[Int((value >> UInt32(shift)) & 0xF)]) }
        }
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            switch byte {
            case 0x22, 0x5C: bytes.append(contentsOf: [0x5C, byte])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0..<0x20, 0x7F: unicode(UInt32(byte))
            // U+0080–U+009F: C2 80 … C2 9F.
            case 0xC2 where i + 1 < utf8.count && (0x80...0x9F).contains(utf8[i + 1]):
                unicode(UInt32(utf8[i + 1]))
                i += 1
            // U+2028, U+2029: E2 80 A8, E2 80 A9.
            case 0xE2 where i + 2 < utf8.count && utf8[i + 1] == 0x80 && (utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9):
                unicode(0x2000 + UInt32(utf8[i + 2]) - 0x80)
                i += 2
            default: bytes.append(byte)
            }
            i += 1
        }
    }

    /// A JSON array of string literals, without spaces: `["a","b"]`.
    public static func array(_ strings: [String]) -> String {
        var out = "["
        for (i, s) in strings.enumerated() {
            if i > 0 { out += "," }
            quote(s, into: &out)
        }
        return out + "]"
    }

    /// Whether `s` needs no escaping: no control character, quote,
    /// backslash or DEL, and no 0xE2 or 0xC2 byte (which start U+2028,
    /// U+2029 and the C1 controls).
    @inline(__always)
    static func isPlain(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xE2 || byte == 0xC2 {
                return false
            }
            return true
        }
    }
}
