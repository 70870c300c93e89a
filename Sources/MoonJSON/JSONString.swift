/// JSON string literals, for every JSON moon writes.
public enum JSONString {
    /// Appends `s` as a JSON string literal (RFC 8259). Also escapes DEL, the
    /// C1 controls U+0080–U+009F (JSON allows them raw, but a terminal that
    /// shows the stream may act on them: `moon run --json` on a screen), and
    /// U+2028 and U+2029, which JSON allows raw but JavaScript line readers do not.
    /// Shared by every JSON moon writes (graph exports and the event stream).
    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        // The usual text (a node name, a queue, a one-line command) has
        // nothing to escape and is appended whole; text with a byte that may
        // need escaping goes scalar by scalar. (0xE2 starts U+2028 and
        // U+2029, 0xC2 the C1 controls, so they take the careful path.)
        if isPlain(s) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Appends `s` as a JSON string literal to UTF-8 `bytes`: the same
    /// literal as `quote(_:into:)` writes into a String.
    public static func quote(_ s: String, into bytes: inout [UInt8]) {
        if isPlain(s) {
            bytes.append(0x22)
            bytes.append(contentsOf: s.utf8)
            bytes.append(0x22)
        } else {
            var out = ""
            quote(s, into: &out)
            bytes.append(contentsOf: out.utf8)
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
