/// A one-pass index over a file's bytes that turns byte offsets and
/// character indexes into 1-based line/column locations in O(log n).
///
/// Why it exists: libyaml's marks count *characters* (its `index` skips a
/// byte-order mark and counts each UTF-8 sequence once), while moon's
/// `SourceLocation.offset` is a byte offset and `column` counts characters on
/// the line. Walking the buffer for each of the tens of thousands of marks in a
/// large file would be quadratic on long lines, so the multi-byte characters
/// are recorded once and every conversion is a binary search.
///
/// Lines end at `\n`, `\r\n` or a lone `\r` (YAML 1.2 and editors agree on
/// these). The same index drives `SourceFile.line(_:)`, so the line a
/// diagnostic names is the line the renderer quotes.
struct SourceIndex: Sendable {
    /// Byte offset where each line starts; `lineStarts[0]` is after any BOM.
    private(set) var lineStarts: [Int] = []
    /// Byte offsets of characters that take more than one byte, ascending.
    private var wideOffsets: [Int] = []
    /// Number of extra (continuation) bytes before and including `wideOffsets[k]`'s character.
    private var extraBytesThrough: [Int] = []
    /// Bytes of a UTF-8 byte-order mark at the start (0 or 3).
    private(set) var bomLength = 0
    /// Byte offset of the first byte that is not part of valid UTF-8, if any.
    private(set) var firstInvalidUTF8: Int?
    /// Byte offset of the first NUL byte, if any.
    private(set) var firstNUL: Int?
    let byteCount: Int

    init(_ bytes: [UInt8]) {
        byteCount = bytes.count
        bytes.withUnsafeBufferPointer { buf in
            let n = buf.count
            var i = 0
            if n >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { i = 3 }
            bomLength = i
            lineStarts.reserveCapacity(n / 32 + 1)
            lineStarts.append(i)
            var extra = 0
            while i < n {
                let b = buf[i]
                if b < 0x80 {
                    if b == 0x0A {
                        lineStarts.append(i + 1)
                    } else if b == 0x0D {
                        // A CR ends a line unless a LF follows, which then ends it.
                        if i + 1 >= n || buf[i + 1] != 0x0A { lineStarts.append(i + 1) }
                    } else if b == 0, firstNUL == nil {
                        firstNUL = i
                    }
                    i += 1
                    continue
                }
                let width = SourceIndex.validSequenceLength(buf, at: i)
                if width == 0 {
                    // Count an invalid byte as one character so positions stay defined.
                    if firstInvalidUTF8 == nil { firstInvalidUTF8 = i }
                    i += 1
                    continue
                }
                extra += width - 1
                wideOffsets.append(i)
                extraBytesThrough.append(extra)
                i += width
            }
        }
    }

    /// Length of the valid UTF-8 sequence starting at `i` (2...4), or 0.
    /// Rejects overlong forms, surrogates and values above U+10FFFF.
    private static func validSequenceLength(_ buf: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        let n = buf.count
        let b0 = buf[i]
        func cont(_ k: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool {
            i + k < n && buf[i + k] >= lo && buf[i + k] <= hi
        }
        switch b0 {
        case 0xC2...0xDF: return cont(1) ? 2 : 0
        case 0xE0: return cont(1, 0xA0) && cont(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
        case 0xED: return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0
        case 0xF0: return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
        case 0xF4: return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0
        default: return 0
        }
    }

    /// Number of characters before byte offset `offset` (excluding the BOM).
    func characterIndex(ofByte offset: Int) -> Int {
        let clamped = min(max(offset, bomLength), byteCount)
        // Multi-byte characters that start before `clamped`.
        let k = SourceIndex.countLess(wideOffsets, than: clamped)
        guard k > 0 else { return clamped - bomLength }
        var extra = extraBytesThrough[k - 1]
        // An offset inside a character (never from libyaml) counts that character as begun.
        let last = wideOffsets[k - 1]
        let width = extra - (k >= 2 ? extraBytesThrough[k - 2] : 0) + 1
        if clamped < last + width { extra -= (last + width - clamped) }
        return clamped - bomLength - extra
    }

    /// The byte offset of the character with index `index` (libyaml's `mark.index`).
    func byteOffset(ofCharacter index: Int) -> Int {
        let index = max(index, 0)
        // Find how many wide characters start before the target character:
        // wide character k has character index wideOffsets[k] - bom - extraBefore(k).
        var lo = 0, hi = wideOffsets.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let extraBefore = mid > 0 ? extraBytesThrough[mid - 1] : 0
            if wideOffsets[mid] - bomLength - extraBefore < index { lo = mid + 1 } else { hi = mid }
        }
        let extra = lo > 0 ? extraBytesThrough[lo - 1] : 0
        return min(bomLength + index + extra, byteCount)
    }

    /// 1-based line number containing byte offset `offset`.
    func line(ofByte offset: Int) -> Int {
        // The last line start that is <= offset.
        max(SourceIndex.countLessOrEqual(lineStarts, than: offset), 1)
    }

    /// The location of byte offset `offset`: 1-based line and character column.
    func location(ofByte offset: Int) -> SourceLocation {
        let offset = min(max(offset, 0), byteCount)
        let line = self.line(ofByte: offset)
        let start = lineStarts[line - 1]
        let column = characterIndex(ofByte: offset) - characterIndex(ofByte: start) + 1
        return SourceLocation(line: line, column: max(column, 1), offset: offset)
    }

    /// The location of the character with libyaml index `index`.
    func location(ofCharacter index: Int) -> SourceLocation {
        location(ofByte: byteOffset(ofCharacter: index))
    }

    /// Byte range of line `number` without its line break, or nil past the end.
    func lineRange(_ number: Int) -> Range<Int>? {
        guard number >= 1, number <= lineStarts.count else { return nil }
        let start = lineStarts[number - 1]
        var end = number < lineStarts.count ? lineStarts[number] : byteCount
        // lineStarts only follow breaks, so the bytes before the next start are the break.
        if number < lineStarts.count {
            end -= 1  // \n or lone \r
        }
        return start..<max(start, end)
    }

    private static func countLess(_ a: [Int], than x: Int) -> Int {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private static func countLessOrEqual(_ a: [Int], than x: Int) -> Int {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
