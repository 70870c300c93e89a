import Glibc

/// Splits a byte stream into lines without ever tearing one: bytes are kept
/// until their `\n` arrives, except that a line longer than `maxLength` is
/// emitted in parts of exactly `maxLength` bytes marked `continued` (a line of
/// exactly `maxLength` bytes is one part). Empty lines are lines.
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
                while pending.count > maxLength {
                    emit(Array(pending[0..<maxLength]), true)
                    pending.removeFirst(maxLength)
                }
            }
        }
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
            emit(Array(pending[offset..<offset + maxLength]), true)
            offset += maxLength
        }
        let last = Array(pending[offset...])
        pending = []
        emit(last, false)
    }
}
