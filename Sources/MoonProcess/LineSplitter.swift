import Glibc

/// Splits a byte stream into lines without ever tearing one: bytes are kept
/// until their `\n` arrives, except that a line longer than `maxLength` is
/// emitted in parts of at most `maxLength` bytes marked `continued` (a line of
/// exactly `maxLength` bytes is one part). A part ends on a UTF-8 character
/// boundary, so a multi-byte character is never cut in two (each half would
/// become U+FFFD once decoded); the parts put together are the line's bytes.
/// Empty lines are lines.
struct LineSplitter {
    let maxLength: Int
    private var pending: [UInt8] = []

    init(maxLength: Int = OutputLine.maxLength) {
        precondition(maxLength > 0)
        self.maxLength = maxLength
    }

    /// Feeds bytes; calls `emit(bytes, continued)` for each complete part.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, emit: ([UInt8], Bool) -> Void) {
        guard let base = chunk.baseAddress else { return }
        let count = chunk.count
        var start = 0
        while start < count {
            if let newline = memchr(base + start, 0x0A, count - start) {
                let end = base.distance(to: UnsafeRawPointer(newline))
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<end]))
                flushLine(emit: emit)
                start = end + 1
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<count]))
                start = count
                // Only strictly longer than the limit: the newline may still come.
                var offset = 0
                while pending.count - offset > maxLength {
                    let length = partLength(at: offset)
                    emit(Array(pending[offset..<offset + length]), true)
                    offset += length
                }
                if offset > 0 { pending.removeFirst(offset) }
            }
        }
    }

    /// The end of the line being written, whose newline has not come (nil
    /// when there is none): at most `limit` bytes, starting on a character
    /// boundary. For a live view of a progress bar or a row of dots.
    func pendingTail(limit: Int) -> [UInt8]? {
        var start = max(0, pending.count - limit)
        // Not inside a character: past its continuation bytes.
        while start > 0 && start < pending.count && pending[start] & 0xC0 == 0x80 { start += 1 }
        return start < pending.count ? Array(pending[start...]) : nil
    }

    /// Delivers a last line that had no newline (at EOF).
    mutating func finish(emit: ([UInt8], Bool) -> Void) {
        if !pending.isEmpty { flushLine(emit: emit) }
    }

    private mutating func flushLine(emit: ([UInt8], Bool) -> Void) {
        if pending.count <= maxLength {
            let line = pending
            pending = []
            emit(line, false)
            return
        }
        var offset = 0
        while pending.count - offset > maxLength {
            let length = partLength(at: offset)
            emit(Array(pending[offset..<offset + length]), true)
            offset += length
        }
        let last = Array(pending[offset...])
        pending = []
        emit(last, false)
    }

    /// The length of the part that starts at `offset` (more than `maxLength`
    /// bytes follow it): `maxLength`, less the first bytes of a UTF-8
    /// character that the cut would split. Bytes that are not valid UTF-8
    /// are cut anywhere (they decode to U+FFFD either way), and a part is
    /// never empty.
    private func partLength(at offset: Int) -> Int {
        let cut = offset + maxLength
        guard pending[cut] & 0xC0 == 0x80 else { return maxLength }
        // The lead byte of the character the cut falls in: at most 3 bytes back.
        var lead = cut - 1
        while lead > offset && cut - lead < 4 && pending[lead] & 0xC0 == 0x80 { lead -= 1 }
        let byte = pending[lead]
        let length = byte >= 0xF0 && byte <= 0xF4 ? 4 : byte >= 0xE0 && byte < 0xF0 ? 3 : byte >= 0xC2 && byte < 0xE0 ? 2 : 0
        guard length > 0, lead > offset, lead + length > cut else { return maxLength }
        return lead - offset
    }
}
