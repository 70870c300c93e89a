/// Terminal columns of text, and cleaning of node output before it reaches
/// the screen. Approximates wcwidth: wide East Asian and emoji ranges take
/// two columns, combining marks none.
public enum TextWidth {
    public static func columns(_ text: String) -> Int {
        var n = 0
        for scalar in text.unicodeScalars { n += columns(scalar) }
        return n
    }

    static func columns(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return 0 }
        if v < 0x300 { return 1 }
        if (0x300...0x36F).contains(v) || (0x200B...0x200F).contains(v) || (0xFE00...0xFE0F).contains(v)
            || (0x1AB0...0x1AFF).contains(v) || (0x20D0...0x20FF).contains(v) || v == 0x200D {
            return 0
        }
        if (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1F64F).contains(v)
            || (0x1F900...0x1F9FF).contains(v) || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return 1
    }

    /// The longest prefix of `text` that fits in `columns`.
    public static func prefix(_ text: String, columns limit: Int) -> String {
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let w = columns(scalar)
            if used + w > limit { break }
            used += w
            out.append(scalar)
        }
        return String(out)
    }

    /// Node output made safe to print between moon's own lines: escape
    /// sequences removed (with `keepColor`, SGR colour sequences are kept and
    /// the line ends with a reset), a carriage return keeps only what follows
    /// it (as a terminal would show a progress bar), other control characters
    /// except tab are dropped. Without `keepColor` the result contains no
    /// escape sequence at all.
    public static func sanitize(_ text: String, keepColor: Bool) -> String {
        // Fast path: most lines are plain.
        guard needsSanitizing(text, keepingNewlines: false) else { return text }
        var out = String.UnicodeScalarView()
        var keptColor = false
        var scalars = Array(text.unicodeScalars)
        // `\r` followed by more text: keep what follows the last one.
        if let cr = scalars.lastIndex(of: "\r"), cr < scalars.count - 1 {
            scalars = Array(scalars[(cr + 1)...])
        }
        var i = 0
        while i < scalars.count {
            let s = scalars[i]
            if s == "\u{1B}" || s == "\u{9B}" {
                // CSI: ESC [ params final (0x40...0x7E); OSC: ESC ] ... BEL or ESC \; others: ESC + one char.
                var j = i + 1
                if s == "\u{9B}" || (j < scalars.count && scalars[j] == "[") {
                    if s != "\u{9B}" { j += 1 }
                    let start = j
                    while j < scalars.count, !(0x40...0x7E).contains(scalars[j].value) { j += 1 }
                    if j < scalars.count {
                        if keepColor && scalars[j] == "m" {
                            let params = String(String.UnicodeScalarView(scalars[start..<j]))
                            if params.allSatisfy({ $0.isNumber || $0 == ";" }) {
                                out.append(contentsOf: "\u{1B}[\(params)m".unicodeScalars)
                                keptColor = true
                            }
                        }
                        j += 1
                    }
                } else if j < scalars.count && scalars[j] == "]" {
                    while j < scalars.count, scalars[j] != "\u{07}", !(scalars[j] == "\u{1B}" && j + 1 < scalars.count && scalars[j + 1] == "\\") { j += 1 }
                    j += (j < scalars.count && scalars[j] == "\u{1B}") ? 2 : 1
                } else {
                    j += 1
                }
                i = j
                continue
            }
            if (s.value < 0x20 && s != "\t") || s.value == 0x7F || (0x80...0x9F).contains(s.value) {
                i += 1
                continue
            }
            out.append(s)
            i += 1
        }
        if keptColor { out.append(contentsOf: "\u{1B}[0m".unicodeScalars) }
        return String(out)
    }

    /// Whether `text` holds anything `sanitize` removes: a C0 control
    /// character other than tab (and line feed, with `keepingNewlines`),
    /// DEL, or a C1 control character (U+0080–U+009F, bytes C2 80–C2 9F).
    /// Read as UTF-8 bytes: the usual line has none and is scanned once.
    public static func needsSanitizing(_ text: String, keepingNewlines: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var previous: UInt8 = 0
            for byte in bytes {
                if byte < 0x20 {
                    if byte != 0x09 && !(keepingNewlines && byte == 0x0A) { return true }
                } else if byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) {
                    return true
                }
                previous = byte
            }
            return false
        }
    }
}
