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
    /// Continuation bytes before each line start (so a column is a subtraction).
    private var lineExtraBytes: [Int] = []
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
            var extra = 0
            lineStarts.append(i)
            lineExtraBytes.append(0)
            while i < n {
                let b = buf[i]
                if b < 0x80 {
                    if b == 0x0A {
                        lineStarts.append(i + 1)
                        lineExtraBytes.append(extra)
                    } else if b == 0x0D {
                        // A CR ends a line unless a LF follows, which then ends it.
                        if i + 1 >= n || buf[i + 1] != 0x0A {
                            lineStarts.append(i + 1)
                            lineExtraBytes.append(extra)
                        }
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
        return min(bomLength + index + extraBefore(wideCount(beforeCharacter: index)), byteCount)
    }

    /// Character index (libyaml's count) of wide character number `k`.
    private func characterIndex(ofWide k: Int) -> Int {
        wideOffsets[k] - bomLength - extraBefore(k)
    }

    /// Continuation bytes of the first `k` wide characters.
    private func extraBefore(_ k: Int) -> Int {
        k > 0 ? extraBytesThrough[k - 1] : 0
    }

    /// How many wide characters come before character index `index`.
    private func wideCount(beforeCharacter index: Int) -> Int {
        var lo = 0, hi = wideOffsets.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if characterIndex(ofWide: mid) < index { lo = mid + 1 } else { hi = mid }
        }
        return lo
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
        let column = characterIndex(ofByte: offset) - (start - bomLength - lineExtraBytes[line - 1]) + 1
        return SourceLocation(line: line, column: max(column, 1), offset: offset)
    }

    /// The location of the character with libyaml index `index`.
    func location(ofCharacter index: Int) -> SourceLocation {
        var cursor = Cursor(self)
        return cursor.location(ofCharacter: index)
    }

    /// Converts libyaml marks to locations, remembering where the last one
    /// was. Marks arrive almost in order, so each conversion moves the cursor
    /// a step or two instead of binary-searching the whole file; a far jump
    /// falls back to a binary search.
    struct Cursor {
        private let index: SourceIndex
        /// Wide characters before the last character converted.
        private var wide = 0
        /// 0-based line of the last location.
        private var line = 0

        init(_ index: SourceIndex) { self.index = index }

        mutating func location(ofCharacter character: Int) -> SourceLocation {
            let character = max(character, 0)
            let wideOffsets = index.wideOffsets
            var steps = 0
            while wide < wideOffsets.count, index.characterIndex(ofWide: wide) < character, steps < 16 {
                wide += 1
                steps += 1
            }
            while wide > 0, index.characterIndex(ofWide: wide - 1) >= character, steps < 16 {
                wide -= 1
                steps += 1
            }
            if steps == 16 { wide = index.wideCount(beforeCharacter: character) }
            let extra = index.extraBefore(wide)
            let offset = min(index.bomLength + character + extra, index.byteCount)

            let starts = index.lineStarts
            steps = 0
            while line + 1 < starts.count, starts[line + 1] <= offset, steps < 16 {
                line += 1
                steps += 1
            }
            while line > 0, starts[line] > offset, steps < 16 {
                line -= 1
                steps += 1
            }
            if steps == 16 { line = index.line(ofByte: offset) - 1 }
            // Counted from the (clamped) offset, so a mark past the end stays on the last line.
            let column = (offset - starts[line]) - (extra - index.lineExtraBytes[line]) + 1
            return SourceLocation(line: line + 1, column: max(column, 1), offset: offset)
        }
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
